#!/bin/sh
# u rewinds the workspace on purpose: on a step to before it, on the goal line to before
# the run. It says what changes back and asks; it refuses while steps may run; the Step
# log says how to undo it (issue 18).
. "$(dirname "$0")/lib.sh"

mkdir "$TMPD/ws"
echo "the operator's" >"$TMPD/ws/mine.txt"
start_append 120 32 step "echo line >> notes.txt; echo changed > mine.txt" log
wait_for "Gate: Before step: Append"
# Live and not paused: refused, nothing asked.
keys u
wait_for "pause the run first \\(p\\)"
keys a
wait_for "Gate: Before step: Log"
[ "$(cat "$TMPD/ws/notes.txt")" = line ] || fail "append did not write notes.txt"

# Paused, nothing running (log waits at its gate): on the goal line, to before the run.
# Asked, declined: nothing changes; asked again, yes.
keys p
wait_for "paused"
keys 1 g
keys u
wait_for "Rewind the workspace to before the run\\? 2 files change back: put back mine.txt, remove notes.txt"
keys n
wait_gone "Rewind the workspace to before the run"
[ "$(cat "$TMPD/ws/mine.txt")" = changed ] || fail "a declined rewind changed mine.txt"
keys u
wait_for "Rewind the workspace to before the run\\?"
keys y
wait_count '"kind":"rewind"' 1
[ "$(cat "$TMPD/ws/mine.txt")" = "the operator's" ] || fail "mine.txt was not put back"
[ -f "$TMPD/ws/notes.txt" ] && fail "notes.txt is still there"
grep -q '"type":"operator.command".*"command":"rewind"' "$j" || fail "no rewind command journaled"
grep -q '"kind":"rewind","message":"the workspace was rewound to before the run: 1 removed, 1 put back.*undo with pevtui --rewind' "$j" ||
	fail "the rewind notice does not say what was restored and how to undo it"

# Resumed, log runs; then on the step log: to before it — log.txt goes, nothing else.
keys p
wait_for "Gate: Before step: Log"
keys a
wait_for "finished — passed" 60
[ -f "$TMPD/ws/log.txt" ] || fail "the run did not write log.txt"
keys 1 g j j
keys u
wait_for "Rewind the workspace to before step log\\? 1 file changes back: remove log.txt"
keys y
wait_count '"kind":"rewind"' 2
[ -f "$TMPD/ws/log.txt" ] && fail "log.txt is still there"
[ "$(cat "$TMPD/ws/mine.txt")" = "the operator's" ] || fail "mine.txt changed again"
# The run's log (the goal line) says what was done and how to undo it.
keys 1 g
wait_for "rewound to before step log: 1 removed \\(log.txt\\)"
expect "undo with pevtui --rewind"
keys q
wait_for "PEVTUI-EXIT=0" 10
