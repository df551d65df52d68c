#!/bin/sh
# A signal when the operator is needed: with the cockpit in a window the operator is not
# looking at, a gate that opens rings the bell and tmux flags the window
# (#{window_bell_flag}); notify_cmd gets the run id, the event, the gate, the step and a
# one-line message in its environment, for each gate and for the end of the run.
. "$(dirname "$0")/lib.sh"

# The cockpit runs in window 0; the operator looks at window 1.
screen() {
	tmux -L "$SOCK" capture-pane -p -t :0
}
keys() {
	tmux -L "$SOCK" send-keys -t :0 "$@"
}
bell_flag() {
	tmux -L "$SOCK" display-message -p -t :0 '#{window_bell_flag}'
}
# wait_bell 0|1 [SECONDS] — polls the flag tmux keeps for window 0.
wait_bell() {
	limit=$(( ${2:-30} * 10 ))
	n=0
	while [ $n -lt $limit ]; do
		[ "$(bell_flag)" = "$1" ] && return 0
		sleep 0.1
		n=$((n + 1))
	done
	fail "window 0's bell flag is $(bell_flag), not $1"
}
# wait_file PATH [SECONDS] — notify_cmd renames its file into place when it is complete.
wait_file() {
	limit=$(( ${2:-30} * 10 ))
	n=0
	while [ $n -lt $limit ]; do
		[ -s "$1" ] && return 0
		sleep 0.1
		n=$((n + 1))
	done
	fail "notify_cmd did not write $1; it wrote: $(ls "$TMPD"/notify.* 2>/dev/null)"
}
# has FILE LINE — the environment listing holds exactly this line.
has() {
	grep -F -x -q -- "$2" "$1" || {
		echo "---- $1 ----"
		cat "$1"
		fail "$1 lacks: $2"
	}
}

cat >"$TMPD/script.json" <<'JSON'
{
 "task": "Write a greeting",
 "planner": [{"goal": "{{task}}", "steps": [{"step_id": "greet", "name": "Greet the reader",
   "description": "Write greet.md with a greeting.",
   "acceptance_criteria": ["greet.md holds a greeting"], "expected_outputs": ["greet.md"],
   "dependencies": [], "estimated_complexity": "low"}]}]
}
JSON
# Every gate signals (no debounce: the two gates may come within seconds). The command
# writes its PEVTUI_ variables, then renames the file into place, named for the event.
cat >"$TMPD/config" <<EOF
[ui]
notify = gates,end
notify_debounce = 0
notify_cmd = env | grep '^PEVTUI_' | sort > "$TMPD/n.\$\$" && mv "$TMPD/n.\$\$" "$TMPD/notify.\$PEVTUI_EVENT\${PEVTUI_GATE:+.\$PEVTUI_GATE}"
EOF

start 100 30 --provider sim --script "$TMPD/script.json" --gate plan,step --config \
	"$TMPD/config"
# The operator turns to another window.
tmux -L "$SOCK" new-window "exec sleep 600"
[ "$(tmux -L "$SOCK" display-message -p '#{window_index}')" = 1 ] ||
	fail "window 1 is not the current window"

wait_for "Gate: Approve the plan" 30
wait_bell 1 10
wait_file "$TMPD/notify.gate.plan" 10
run_id=$(ls "$TMPD/runs")
[ -n "$run_id" ] || fail "no run folder"
has "$TMPD/notify.gate.plan" "PEVTUI_EVENT=gate"
has "$TMPD/notify.gate.plan" "PEVTUI_RUN_ID=$run_id"
has "$TMPD/notify.gate.plan" "PEVTUI_RUN_DIR=$TMPD/runs/$run_id"
has "$TMPD/notify.gate.plan" "PEVTUI_GATE=plan"
has "$TMPD/notify.gate.plan" "PEVTUI_STEP="
has "$TMPD/notify.gate.plan" "PEVTUI_STATUS="
grep -q "^PEVTUI_MESSAGE=plan gate: the plan (revision 0) waits for approval" \
	"$TMPD/notify.gate.plan" || fail "notify.gate.plan: no plan gate message"

# Looking at window 0 clears its flag; back to window 1, the next gate rings again.
tmux -L "$SOCK" select-window -t :0
tmux -L "$SOCK" select-window -t :1
wait_bell 0 5
keys a
wait_for "Gate: Before step: Greet the reader" 30
wait_bell 1 10
wait_file "$TMPD/notify.gate.step" 10
has "$TMPD/notify.gate.step" "PEVTUI_GATE=step"
has "$TMPD/notify.gate.step" "PEVTUI_STEP=greet"
has "$TMPD/notify.gate.step" "PEVTUI_RUN_ID=$run_id"
has "$TMPD/notify.gate.step" \
	'PEVTUI_MESSAGE=step gate: step greet "Greet the reader" waits for approval'

# The end of the run signals too.
tmux -L "$SOCK" select-window -t :0
tmux -L "$SOCK" select-window -t :1
wait_bell 0 5
keys a
wait_for "finished — passed" 60
wait_bell 1 10
wait_file "$TMPD/notify.end" 10
has "$TMPD/notify.end" "PEVTUI_EVENT=end"
has "$TMPD/notify.end" "PEVTUI_STATUS=passed"
has "$TMPD/notify.end" "PEVTUI_GATE="
has "$TMPD/notify.end" "PEVTUI_MESSAGE=the run ended: passed"
keys q
wait_for "PEVTUI-EXIT=0" 10

# notify = none: no bell, no command.
tmux -L "$SOCK" kill-server >/dev/null 2>&1
rm -rf "$TMPD/runs" "$TMPD"/notify.*
printf '[ui]\nnotify = none\nnotify_cmd = touch "%s/notify.none"\n' "$TMPD" >"$TMPD/config"
start 100 30 --provider sim --script "$TMPD/script.json" --gate plan --config "$TMPD/config"
tmux -L "$SOCK" new-window "exec sleep 600"
wait_for "Gate: Approve the plan" 30
keys a
wait_for "finished — passed" 60
[ "$(bell_flag)" = 0 ] || fail "the bell rang with notify = none"
[ -e "$TMPD/notify.none" ] && fail "notify_cmd ran with notify = none"
keys q
wait_for "PEVTUI-EXIT=0" 10
exit 0
