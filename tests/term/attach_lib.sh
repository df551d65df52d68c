# attach_lib.sh — helpers for the tests of detached runs (sourced after lib.sh): more
# cockpits in windows of the test's tmux server, each with its own stderr and exit line.

# cockpit NAME ARGS… — a window NAME running pevtui ARGS; it prints NAME-EXIT=status.
cockpit() {
	name=$1
	shift
	printf '%s\n' "#!/bin/sh" \
		"cd '$TMPD' || exit 1" \
		"'$PEVTUI' --runs-dir '$TMPD/runs' $* 2>'$TMPD/$name.err'" \
		"echo \"$name-EXIT=\$?\"" \
		"exec sleep 600" >"$TMPD/$name.sh"
	chmod +x "$TMPD/$name.sh"
	tmux -L "$SOCK" new-window -d -n "$name" \
		"env NO_COLOR=1 TERM=screen-256color LC_ALL=C.UTF-8 $TMPD/$name.sh"
}

screen_of() {
	tmux -L "$SOCK" capture-pane -p -t "$1"
}

# wait_in WINDOW PATTERN [SECONDS] — wait_for on another window.
wait_in() {
	limit=$(( ${3:-30} * 10 ))
	n=0
	while [ $n -lt $limit ]; do
		screen_of "$1" | grep -E -q -- "$2" && return 0
		sleep 0.1
		n=$((n + 1))
	done
	echo "---- window $1 ----"
	screen_of "$1"
	cat "$TMPD/$1.err" 2>/dev/null
	fail "timed out waiting in window $1 for: $2"
}

# wait_file FILE PATTERN [SECONDS] — polls until grep -E finds PATTERN in FILE.
wait_file() {
	limit=$(( ${3:-30} * 10 ))
	n=0
	while [ $n -lt $limit ]; do
		grep -E -q -- "$2" "$1" 2>/dev/null && return 0
		sleep 0.1
		n=$((n + 1))
	done
	fail "timed out waiting for \"$2\" in $1: $(cat "$1" 2>/dev/null)"
}

# wait_state STATE [SECONDS] — polls --list-runs until the only run is in STATE
# (running while an engine holds it; passed once it ended and let go).
wait_state() {
	limit=$(( ${2:-30} * 10 ))
	n=0
	while [ $n -lt $limit ]; do
		"$PEVTUI" --list-runs --runs-dir "$TMPD/runs" 2>/dev/null | grep -E -q -- " $1 " &&
			return 0
		sleep 0.1
		n=$((n + 1))
	done
	fail "the run is not $1: $("$PEVTUI" --list-runs --runs-dir "$TMPD/runs" 2>&1)"
}

# gate_decisions ID — how many gate.decision events gate ID has in the journal.
gate_decisions() {
	grep -h '"type":"gate.decision"' "$TMPD"/runs/*/journal.jsonl |
		grep -c "\"gate_id\":$1,"
}
