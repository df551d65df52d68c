#!/bin/sh
# A finished run is reopened by a re-run or an edit (DESIGN.md), wherever the operator
# meets it (issue 29, item 1):
# - attached to a detached run that finishes: the engine stays while the cockpit is
#   attached, and r really runs the step again (run.reopen, a second run.end); when the
#   cockpit leaves, so does the engine;
# - `--resume` of the finished run opens it in the cockpit, where r and e reopen it;
#   quitting there without either leaves the journal as it was;
# - `--headless --resume` of it is refused in one line naming --replay and the cockpit;
# - a command the engine can no longer take says "not sent", never "sent".
. "$(dirname "$0")/lib.sh"
. "$(dirname "$0")/attach_lib.sh"

# count PATTERN — lines of the journal $j matching PATTERN.
count() {
	grep -c -E -- "$1" "$j" 2>/dev/null
}

"$PEVTUI" --detach --demo --gate plan --sim-delay 0 --runs-dir "$TMPD/runs" \
	2>"$TMPD/detach.err" || fail "--detach failed: $(cat "$TMPD/detach.err")"
rundir=$(ls -d "$TMPD"/runs/*/)
id=$(basename "$rundir")
j="$rundir/journal.jsonl"

# Attached while the run finishes: the engine stays for the cockpit.
start 110 32 --attach last
wait_for "Gate: Approve the plan" 30
keys a
wait_for "finished — passed" 60
engine=$(cat "$rundir/lock")
[ -n "$engine" ] && kill -0 "$engine" || fail "the engine left with a cockpit attached"
keys 1 g j r
wait_for "Run again: acme, memo\\? This reopens the finished run" 10
keys y
wait_for "re-run sent" 10
wait_count '"type":"run.end"' 2
[ "$(count '"type":"run.reopen".*"reason":"rerun"')" = 1 ] || fail "no run.reopen for the re-run"
[ "$(count '"type":"step.start".*"step_id":"acme"')" -ge 2 ] || fail "acme did not run again"
wait_for "finished — passed" 30
# The cockpit leaves: the engine goes with it, nothing journaled for that.
lines=$(wc -l <"$j")
keys q
wait_for "PEVTUI-EXIT=0" 10
wait_state passed
[ "$(wc -l <"$j")" = "$lines" ] || fail "leaving journaled: $(tail -n 2 "$j")"

# --headless --resume: refused in one line, before anything else is said.
"$PEVTUI" --headless --resume "$id" --runs-dir "$TMPD/runs" >"$TMPD/out" 2>"$TMPD/err" &&
	fail "--headless --resume of a finished run succeeded"
[ "$(wc -l <"$TMPD/err")" = 1 ] || fail "more than one line: $(cat "$TMPD/err")"
grep -q "run $id already finished (passed): browse it with pevtui --replay $id, or reopen it in the cockpit" \
	"$TMPD/err" || fail "$(cat "$TMPD/err")"
[ -s "$TMPD/out" ] && fail "stdout: $(cat "$TMPD/out")"

# --resume in the cockpit opens it at its end; q leaves it untouched.
SOCK="$SOCK-2"
start 110 32 --resume "$id" --gate plan
wait_for "finished — passed" 30
wait_for "r \\(re-run\\) or e \\(edit\\) reopens the run" 10
keys q
wait_for "PEVTUI-EXIT=0" 10
[ "$(wc -l <"$j")" = "$lines" ] || fail "opening and quitting journaled: $(tail -n 2 "$j")"

# ... and r reopens it.
SOCK="$SOCK-3"
start 110 32 --resume "$id" --gate plan
wait_for "finished — passed" 30
keys 1 g j r
wait_for "Run again: acme, memo\\? This reopens the finished run" 10
keys y
wait_for "re-run sent" 10
wait_count '"type":"run.end"' 3
[ "$(count '"type":"run.reopen".*"reason":"rerun"')" = 2 ] || fail "no run.reopen for the re-run"
wait_for "finished — passed" 30
keys q
wait_for "PEVTUI-EXIT=0" 10

# ... and so does an edit (e, the inline form).
SOCK="$SOCK-4"
start 110 32 --resume "$id" --gate plan
wait_for "finished — passed" 30
keys 1 g j e
wait_for "Edit step acme" 10
keys C-u "Review the Acme agreement again"
wait_for "Review the Acme agreement again" 10
keys C-s
wait_count '"type":"run.end"' 4
[ "$(count '"type":"run.reopen".*"reason":"edit"')" = 1 ] || fail "no run.reopen for the edit"
wait_for "finished — passed" 30
keys q
wait_for "PEVTUI-EXIT=0" 10
wait_state passed

# A command the engine cannot take any more is not called sent: the engine of an attached
# cockpit is stopped, and r there says so.
tmux -L "$SOCK" kill-server >/dev/null 2>&1
rm -rf "$TMPD/runs"
"$PEVTUI" --detach --demo --gate plan --sim-delay 0 --runs-dir "$TMPD/runs" \
	2>"$TMPD/detach.err" || fail "--detach failed: $(cat "$TMPD/detach.err")"
rundir=$(ls -d "$TMPD"/runs/*/)
SOCK="$SOCK-5"
start 110 32 --attach last
wait_for "Gate: Approve the plan" 30
keys a
wait_for "finished — passed" 60
kill "$(cat "$rundir/lock")"
wait_for "detached from run" 15
keys 1 g j r
wait_for "Run again: acme" 10
keys y
wait_for "not sent: the engine of run .* is gone" 10
refute "re-run sent"
keys q
wait_for "PEVTUI-EXIT=0" 10
