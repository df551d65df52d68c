#!/bin/sh
# Issue 29 item 5: a task longer than the plan's goal may be is refused before any model
# call or run folder, in one line that gives its length, the limit and how to pass a long
# brief (a file in the workspace); it was planned for 90 s and then blamed on the planner.
. "$(dirname "$0")/lib.sh"

head -c 102400 /dev/zero | tr '\0' 'x' >"$TMPD/task.txt"
for how in "--demo" "--provider openai --model m --base-url http://127.0.0.1:9/v1"; do
	rm -rf "$TMPD/runs"
	start 120 30 $how "\"\$(cat '$TMPD/task.txt')\""
	wait_for "PEVTUI-EXIT=1" 20
	[ "$(wc -l <"$TMPD/stderr")" -eq 1 ] || fail "not one line: $(cat "$TMPD/stderr")"
	grep -q "pevtui: the task is 102400 bytes long; the limit is 8192\\. Put a long brief in a file in the workspace" "$TMPD/stderr" ||
		fail "($how) the error does not say so: $(cat "$TMPD/stderr")"
	[ -z "$(ls -A "$TMPD/runs" 2>/dev/null)" ] || fail "($how) a run folder was made"
	tmux -L "$SOCK" kill-server >/dev/null 2>&1
done

# At the limit the task is taken.
head -c 8192 /dev/zero | tr '\0' 'y' >"$TMPD/task.txt"
rm -rf "$TMPD/runs"
start 120 30 --demo "\"\$(cat '$TMPD/task.txt')\""
wait_for "Gate: Approve the plan" 30
keys q
wait_for "Quit now\\?" 10
keys y
wait_for "PEVTUI-EXIT=3" 10
