#!/bin/sh
# No pevtui process shows a key (issue 26): with a provider key and another credential in
# its environment, every process pevtui keeps — the waiter the shell waits for, the
# cockpit's engine, the keeper of a running command, and after D the detached engine and
# an attached cockpit — has neither in /proc/PID/environ, and each is non-dumpable: a
# reader of the same user and the same (no) capabilities is refused its
# /proc/PID/environ. A control, a dumpable process started the same way, shows the
# reader reads otherwise. The processes are found by walking the tree below the tmux
# panes and the engine.
. "$(dirname "$0")/lib.sh"
. "$(dirname "$0")/attach_lib.sh"

[ -r /proc/self/environ ] || { echo "no /proc: skipped"; exit 77; }
# As root, pevtui and the reader both run without capabilities: a reader with
# CAP_SYS_PTRACE reads a non-dumpable process, and one with fewer capabilities than its
# target is refused whatever the target did, so either would prove nothing.
if [ "$(id -u)" = 0 ]; then
	command -v setpriv >/dev/null 2>&1 || { echo "no setpriv (util-linux): skipped"; exit 77; }
	NOCAPS="setpriv --inh-caps=-all --ambient-caps=-all --bounding-set=-all --"
	printf '#!/bin/sh\nexec %s "%s" "$@"\n' "$NOCAPS" "$PEVTUI" >"$TMPD/pevtui-nocaps"
	chmod +x "$TMPD/pevtui-nocaps"
	PEVTUI="$TMPD/pevtui-nocaps"
else
	NOCAPS=""
fi
reader() { $NOCAPS cat "$1"; }
comm_of() { cat "/proc/$1/comm" 2>/dev/null; }

KEY=sk-ant-procscrub-4f1b9e77
TOKEN=tok-procscrub-0c62d1a5
export ANTHROPIC_API_KEY="$KEY" PROCSCRUB_SERVICE_TOKEN="$TOKEN"

# The control: a dumpable process started as pevtui is, readable by the reader.
$NOCAPS sleep 120 &
control=$!
n=0
until [ "$(comm_of $control)" = sleep ]; do
	n=$((n + 1))
	[ $n -lt 100 ] || fail "the control process did not start"
	sleep 0.1
done
if ! reader /proc/$control/environ 2>/dev/null | tr '\0' '\n' |
	grep -q "^PROCSCRUB_SERVICE_TOKEN=$TOKEN\$"; then
	kill $control
	echo "a reader without capabilities cannot read a dumpable process here: skipped"
	exit 77
fi
kill $control

# descendants PID… — the PIDs and every process below them, one a line.
descendants() {
	cat /proc/[0-9]*/stat 2>/dev/null | awk -v roots="$*" '
		{ s = $0; sub(/^.*\) /, "", s); split(s, f, " "); parent[$1] = f[2] }
		END {
			n = split(roots, r, " ")
			for (i = 1; i <= n; i++) take[r[i]] = 1
			do {
				more = 0
				for (p in parent)
					if (!(p in take) && (parent[p] in take)) { take[p] = 1; more = 1 }
			} while (more)
			for (p in take) if (p in parent) print p
		}'
}

# pevtui_below PID — the pevtui processes that are children of PID (a pane's shell).
pevtui_below() {
	for p in $(descendants "$1"); do
		[ "$p" != "$1" ] && [ "$(comm_of "$p")" = pevtui ] &&
			awk '{ s = $0; sub(/^.*\) /, "", s); split(s, f, " "); print f[2] }' \
				"/proc/$p/stat" | grep -qx "$1" && echo "$p"
	done
}

# check ROOT… — every process from the ROOTs down: no key in its environment; a pevtui
# process refuses the reader. Sets npevtui and ncommands (the commands' processes).
check() {
	npevtui=0
	ncommands=0
	for p in $(descendants "$@"); do
		c=$(comm_of "$p")
		[ -n "$c" ] || continue # gone meanwhile
		env=$(tr '\0' '\n' <"/proc/$p/environ" 2>/dev/null)
		case $env in
		*"$KEY"*) fail "process $p ($c) has the provider key in its environment" ;;
		*"$TOKEN"*) fail "process $p ($c) has the service token in its environment" ;;
		esac
		if [ "$c" = pevtui ]; then
			npevtui=$((npevtui + 1))
			if reader "/proc/$p/environ" >/dev/null 2>&1; then
				fail "pevtui process $p is dumpable: a process of the same user reads its environment"
			fi
		else
			ncommands=$((ncommands + 1))
		fi
	done
}

# A plan of two steps side by side: "slow" runs a long command (its keeper stays), "held"
# is high-complexity and waits at its gate meanwhile.
mkdir -p "$TMPD/ws"
cat >"$TMPD/script.json" <<'EOS'
{"task": "Two things",
 "planner": [{"goal": "{{task}}", "steps": [
   {"step_id": "slow", "name": "Slow", "description": "Wait a while.",
    "acceptance_criteria": ["waited"], "dependencies": [], "expected_outputs": [],
    "estimated_complexity": "low"},
   {"step_id": "held", "name": "Held", "description": "Something weighty.",
    "acceptance_criteria": ["done"], "dependencies": [], "expected_outputs": [],
    "estimated_complexity": "high"}]}],
 "executor": {
   "slow": [{"rounds": [{"text": "Waiting.", "tool_calls": [{"name": "run_shell",
       "input": {"command": "sleep 90"}}]}],
     "final": {"reasoning": "waited", "actions_taken": ["run_shell"],
       "step_output": {"findings": "waited", "artifacts": [], "meets_criteria": true},
       "confidence": 0.9}}]}}
EOS

# Attached: the waiter and the cockpit with its engine, the keeper below it.
start 120 34 --provider sim --script "$TMPD/script.json" --gate high \
	--workspace "$TMPD/ws" "'Two things'"
wait_for "Gate: High-complexity step" 30
pane=$(tmux -L "$SOCK" display-message -p -t 0 '#{pane_pid}')
n=0
until [ -n "$(descendants "$pane" | while read -r p; do [ "$(comm_of "$p")" = sleep ] && echo "$p"; done)" ]; do
	n=$((n + 1))
	[ $n -lt 300 ] || fail "the command never started"
	sleep 0.1
done
roots=$(pevtui_below "$pane")
[ -n "$roots" ] || fail "no pevtui process below the pane"
check $roots
echo "attached: $npevtui pevtui processes, $ncommands of the command"
# The waiter, the cockpit and the keeper; the command's sh and sleep.
[ "$npevtui" -ge 3 ] || fail "found $npevtui pevtui processes, not waiter, cockpit and keeper"
[ "$ncommands" -ge 1 ] || fail "found no process of the command"

# Detached (D): the engine goes on alone, a cockpit attaches to it.
keys Q
wait_for "PEVTUI-EXIT=0" 15
rundir=$(ls -d "$TMPD"/runs/*/)
engine=$(cat "$rundir/lock")
[ -n "$engine" ] && kill -0 "$engine" || fail "no engine in $rundir/lock"
cockpit again --attach last
wait_in again "Gate: High-complexity step" 30
pane2=$(tmux -L "$SOCK" display-message -p -t again '#{pane_pid}')
attached=$(pevtui_below "$pane2")
[ -n "$attached" ] || fail "no attached cockpit below its pane"
check "$engine" $attached
echo "detached: $npevtui pevtui processes, $ncommands of the command"
# The engine, its keeper and the attached cockpit.
[ "$npevtui" -ge 3 ] || fail "found $npevtui pevtui processes, not engine, keeper and cockpit"
[ "$ncommands" -ge 1 ] || fail "found no process of the command"
