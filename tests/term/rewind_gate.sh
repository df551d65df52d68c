#!/bin/sh
# The rewind gate: a step runs again, but a file its earlier attempt changed was changed
# since by the operator (in an editor). Nothing is overwritten silently: the gate names
# the file, d shows what a restore would change, s keeps theirs, a restores (issue 18).
. "$(dirname "$0")/lib.sh"

start_append 110 34 rewind "echo line >> notes.txt"
wait_for "finished — passed" 60
[ "$(cat "$TMPD/ws/notes.txt")" = "line" ] || fail "the first run did not write one line"

# The operator edits the file the step wrote, then runs the step again.
printf 'line\nmine\n' >"$TMPD/ws/notes.txt"
keys 1 g j
keys r
wait_for "Run again: append\\?"
keys y
wait_for "Gate: Restore over someone else's change\\? \\(step append\\)" 30
expect "notes.txt  \\(step append's; back to checkpoint"
expect "a restore  s keep theirs  d show the diff"
grep -q '"type":"step.start".*"attempt":2' "$j" || fail "no second attempt started"
grep -q '"type":"tool.call".*"attempt":2' "$j" && fail "the attempt ran before the gate was answered"
# d: what a restore would do — take out both lines (the file did not exist before).
keys d
wait_for "What a restore would change"
expect "-mine"
keys s
wait_count '"type":"gate.decision".*"gate":"rewind".*"decision":"skip".*"by":"operator"' 1
wait_count '"type":"run.end"' 2
wait_for "finished — passed" 30
[ "$(cat "$TMPD/ws/notes.txt")" = "$(printf 'line\nmine\nline')" ] ||
	fail "keep theirs did not keep the operator's line: $(cat "$TMPD/ws/notes.txt")"
grep -q '"kind":"checkpoint_conflict".*"path":"notes.txt"' "$j" || fail "no conflict notice"

# Again, and this time restore: the operator's edit goes, the step starts where its last
# series started (the file as it was before that attempt).
printf 'scribbled over\n' >"$TMPD/ws/notes.txt"
keys 1 g j
keys r
wait_for "Run again: append\\?"
keys y
wait_for "Gate: Restore over someone else's change\\?" 30
keys a
wait_count '"type":"gate.decision".*"gate":"rewind".*"decision":"approve".*"by":"operator"' 1
wait_count '"type":"run.end"' 3
[ "$(cat "$TMPD/ws/notes.txt")" = "$(printf 'line\nmine\nline')" ] ||
	fail "restore did not put the file back before the step: $(cat "$TMPD/ws/notes.txt")"
grep -q '"kind":"checkpoint_restore".*restored over someone else' "$j" ||
	fail "no notice of the restore at the gate"
keys q
wait_for "PEVTUI-EXIT=0" 10
