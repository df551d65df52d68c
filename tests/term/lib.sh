# lib.sh — shared helpers for the tmux terminal tests (sourced, not run).
# Each test gets a private tmux server (-L), a temp dir for runs, and bounded waits that
# poll the screen instead of sleeping for fixed times.

command -v tmux >/dev/null 2>&1 || { echo "tmux not installed: skipped"; exit 77; }
: "${top_builddir:=.}"
: "${PEVTUI:=$top_builddir/pevtui}"
case $PEVTUI in /*) ;; *) PEVTUI="$(pwd)/$PEVTUI" ;; esac
[ -x "$PEVTUI" ] || { echo "no binary at $PEVTUI"; exit 99; }

SOCK="pevtui-test-$$"
SOCKS="$SOCK" # every server name start has used, for cleanup
n_start=0
TMPD=$(mktemp -d /tmp/pevtui-term.XXXXXX) || exit 99
export LC_ALL=C.UTF-8
# stop_engines — ends every pevtui still holding a run of this test. A cockpit whose
# terminal goes away (kill-server) detaches and its run goes on (README: Detach and
# attach): after a test, and before a test reuses its runs folder, it is stopped here.
stop_engines() {
	n=0
	while [ $n -lt 100 ]; do
		alive=""
		for lock in "$TMPD"/runs/*/lock "$TMPD"/*/pevtui/runs/*/lock; do
			[ -f "$lock" ] || continue
			flock -n "$lock" true 2>/dev/null && continue
			pid=$(cat "$lock" 2>/dev/null)
			[ -n "$pid" ] && kill "$pid" 2>/dev/null && alive=1
		done
		[ -z "$alive" ] && return 0
		sleep 0.1
		n=$((n + 1))
	done
}

cleanup() {
	rc=$?
	for sock in $SOCKS; do
		tmux -L "$sock" kill-server >/dev/null 2>&1
		rm -f "${TMUX_TMPDIR:-/tmp}/tmux-$(id -u)/$sock" # tmux leaves its socket file
	done
	stop_engines
	# Under --enable-sanitizers a report fails the test even when the screen looked right.
	if grep -E -q "Sanitizer|runtime error:" "$TMPD/stderr" 2>/dev/null; then
		echo "FAIL: sanitizer report:"
		cat "$TMPD/stderr"
		rc=1
	fi
	rm -rf "$TMPD"
	exit $rc
}
trap cleanup EXIT
trap 'exit 1' INT TERM

# start COLS ROWS ARGS… — runs pevtui with ARGS in a detached session of that size. The
# shell prints the exit status when pevtui ends and keeps the pane open.
start() {
	cols=$1
	rows=$2
	shift 2
	# A server of its own for each start: one told to go a moment ago (kill-server) may
	# still take a new session and then exit with it, which left a test waiting on "no
	# server running" for a program that never started.
	n_start=$((n_start + 1))
	SOCK="pevtui-test-$$-$n_start"
	SOCKS="$SOCKS $SOCK"
	printf '%s\n' "#!/bin/sh" \
		"cd '$TMPD' || exit 1" \
		"'$PEVTUI' --sim-delay 0 --runs-dir '$TMPD/runs' $* 2>'$TMPD/stderr'" \
		"echo \"PEVTUI-EXIT=\$?\"" \
		"exec sleep 600" >"$TMPD/run.sh"
	chmod +x "$TMPD/run.sh"
	tmux -u -L "$SOCK" -f /dev/null new-session -d -x "$cols" -y "$rows" \
		"env NO_COLOR=1 TERM=screen-256color LC_ALL=C.UTF-8 XDG_DATA_HOME=$TMPD/data ${TEST_ENV:-} $TMPD/run.sh"
}

screen() {
	tmux -L "$SOCK" capture-pane -p
}

keys() {
	tmux -L "$SOCK" send-keys "$@"
}

fail() {
	echo "FAIL: $*"
	echo "---- screen ----"
	screen
	echo "---- stderr ----"
	cat "$TMPD/stderr" 2>/dev/null
	exit 1
}

# wait_for PATTERN [SECONDS] — polls the screen until grep -E finds PATTERN.
wait_for() {
	limit=$(( ${2:-30} * 10 ))
	n=0
	while [ $n -lt $limit ]; do
		screen | grep -E -q -- "$1" && return 0
		sleep 0.1
		n=$((n + 1))
	done
	fail "timed out waiting for: $1"
}

# wait_gone PATTERN [SECONDS] — polls the screen until PATTERN is no longer on it. Use it
# after a key that removes something (Esc on an overlay): a pattern that was on screen
# before the key, such as the status line under the overlay, proves nothing.
wait_gone() {
	limit=$(( ${2:-30} * 10 ))
	n=0
	while [ $n -lt $limit ]; do
		screen | grep -E -q -- "$1" || return 0
		sleep 0.1
		n=$((n + 1))
	done
	fail "timed out waiting for this to go: $1"
}

# wait_width_le COLS [SECONDS] — polls until no line on screen is wider than COLS.
wait_width_le() {
	limit=$(( ${2:-30} * 10 ))
	n=0
	while [ $n -lt $limit ]; do
		[ "$(screen_width)" -le "$1" ] && return 0
		sleep 0.1
		n=$((n + 1))
	done
	fail "a line is still wider than $1 columns"
}

# expect PATTERN — the screen shows PATTERN now.
expect() {
	screen | grep -E -q -- "$1" || fail "screen lacks: $1"
}

# refute PATTERN — the screen does not show PATTERN.
refute() {
	if screen | grep -E -q -- "$1"; then
		fail "screen shows: $1"
	fi
}

expect_titles() {
	for t in "─ Plan " "─ Step log " "─ Verdicts " "─ Cost "; do
		expect "$t"
	done
}

# The width of the widest line on screen, in columns (wc -L measures display width).
screen_width() {
	screen | wc -L
}

# wait_count PATTERN N — polls the journal $j until grep -E finds PATTERN on N lines or more.
wait_count() {
	n=0
	until [ "$(grep -c -E -- "$1" "$j" 2>/dev/null)" -ge "$2" ]; do
		n=$((n + 1))
		[ $n -lt 600 ] || fail "the journal never had $2 of: $1"
		sleep 0.1
	done
}

# start_append COLS ROWS GATE COMMAND [log] — the checkpoint tests' run: in the workspace
# $TMPD/ws (made if missing), step append runs COMMAND with run_shell (its findings say
# which attempt it was); with `log`, step log, which depends on it, then appends a line
# to log.txt. pevtui runs the plan in COLS×ROWS with --gate GATE; j is set to its journal
# once there is one.
start_append() {
	sa_cols=$1 sa_rows=$2 sa_gate=$3 sa_cmd=$4
	mkdir -p "$TMPD/ws"
	if [ "${5:-}" = log ]; then
		sa_task="Append two lines"
		sa_log_step=',
   {"step_id": "log", "name": "Log", "description": "Append an entry to log.txt.",
    "acceptance_criteria": ["log.txt holds an entry"], "dependencies": ["append"],
    "expected_outputs": ["log.txt"], "estimated_complexity": "low"}'
		sa_log_exec=',
   "log": [{"rounds": [{"text": "Logging.", "tool_calls": [{"name": "run_shell",
       "input": {"command": "echo entry >> log.txt"}}]}],
     "final": {"reasoning": "logged", "actions_taken": ["run_shell"],
       "step_output": {"findings": "logged", "artifacts": ["log.txt"],
         "meets_criteria": true}, "confidence": 0.9}}]'
	else
		sa_task="Append a line" sa_log_step="" sa_log_exec=""
	fi
	cat >"$TMPD/script.json" <<EOS
{"task": "$sa_task",
 "planner": [{"goal": "{{task}}", "steps": [
   {"step_id": "append", "name": "Append", "description": "Append a line to notes.txt.",
    "acceptance_criteria": ["notes.txt holds a line"], "dependencies": [],
    "expected_outputs": ["notes.txt"], "estimated_complexity": "low"}$sa_log_step]}],
 "executor": {
   "append": [{"rounds": [{"text": "Appending.", "tool_calls": [{"name": "run_shell",
       "input": {"command": "$sa_cmd"}}]}],
     "final": {"reasoning": "appended", "actions_taken": ["run_shell"],
       "step_output": {"findings": "appended in attempt {{attempt}}",
         "artifacts": ["notes.txt"], "meets_criteria": true}, "confidence": 0.9}}]$sa_log_exec}}
EOS
	start "$sa_cols" "$sa_rows" --provider sim --script "$TMPD/script.json" \
		--gate "$sa_gate" --workspace "$TMPD/ws" "'$sa_task'"
	n=0
	until j=$(ls "$TMPD"/runs/*/journal.jsonl 2>/dev/null | head -n 1) && [ -n "$j" ]; do
		n=$((n + 1))
		[ $n -lt 300 ] || fail "no journal"
		sleep 0.1
	done
}
