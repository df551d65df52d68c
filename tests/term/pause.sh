#!/bin/sh
# p pauses (running steps finish, none start), p again while steps still run cancels them
# (they start over), p when nothing runs resumes; the status line names each state and
# what the next p does. The dag scenario runs three steps at once; a slow simulated model
# keeps them in flight long enough to press keys.
. "$(dirname "$0")/lib.sh"

start 120 30 --demo --scenario dag --gate none --sim-delay 40
wait_for " p pause " 30
wait_for "oldtown .* ×1 " 30
keys p
# The three independent steps are still in flight: they finish unless p cancels them.
wait_for "paused, [0-9]+ steps? finishing — p cancels them" 20
expect " p cancel running "
keys p
wait_for "paused — p resumes" 20
# The step shown says it starts over: its model call was cancelled, or (cancelled between
# two calls, e.g. while its checkpoint was taken) its calls were.
wait_for "(call cancelled; the step starts over|calls were cancelled: it starts over)" 10
expect " p resume "
grep -q '"kind":"pause","cancel":true,"message":"paused: calls in flight cancelled' \
	"$TMPD"/runs/*/journal.jsonl || fail "no cancel notice in the journal"
# Paused with nothing in flight: nothing starts, however long we wait.
before=$(grep -c '"type":"step.start"' "$TMPD"/runs/*/journal.jsonl)
sleep 1
after=$(grep -c '"type":"step.start"' "$TMPD"/runs/*/journal.jsonl)
[ "$before" -eq "$after" ] || fail "a step started while paused ($before -> $after)"
expect "paused — p resumes"
keys p
wait_for "finished — passed" 90
screen | tail -n 1 | grep -q "paused" && fail "the status line still says paused"
keys q
wait_for "PEVTUI-EXIT=0" 10
