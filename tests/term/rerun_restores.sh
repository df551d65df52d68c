#!/bin/sh
# A re-run and an edit of a passed step start it where it first started: before the step
# and its stale dependent run again, the files their earlier attempts changed are put
# back, so two appending steps leave one line each, not one per run (issue 18).
. "$(dirname "$0")/lib.sh"

# The edit changes append's description; its definition differs, so it runs again.
cat >"$TMPD/editor.sh" <<EOS
#!/bin/sh
sed 's/Append a line to notes.txt./Append one line to notes.txt./' "\$1" >"\$1.new" && mv "\$1.new" "\$1"
EOS
chmod +x "$TMPD/editor.sh"
TEST_ENV="VISUAL= EDITOR=$TMPD/editor.sh"

# approve NAME — waits for the step gate of step NAME and approves it; returns once the
# approval is journaled.
approve() {
	before=$(grep -c '"type":"gate.decision".*"decision":"approve"' "$j")
	wait_for "Gate: Before step: $1"
	keys a
	wait_count '"type":"gate.decision".*"decision":"approve"' $((before + 1))
}

lines() {
	wc -l <"$TMPD/ws/$1" | tr -d ' '
}

start_append 110 32 step "echo line >> notes.txt" log
approve Append
approve Log
wait_count '"type":"run.end"' 1
wait_for "finished — passed"
[ "$(lines notes.txt)" = 1 ] && [ "$(lines log.txt)" = 1 ] || fail "the first run did not write one line each"

# r on append: both run again, each from where it first started.
keys 1 g j
keys r
wait_for "Run again: append, log\\?"
keys y
approve Append
approve Log
wait_count '"type":"run.end"' 2
[ "$(lines notes.txt)" = 1 ] || fail "notes.txt has $(lines notes.txt) lines after the re-run"
[ "$(lines log.txt)" = 1 ] || fail "log.txt has $(lines log.txt) lines after the re-run"
grep -q '"kind":"checkpoint_restore","step_id":"append".*"paths":\["notes.txt"\]' "$j" ||
	fail "no restore of append's notes.txt journaled"
grep -q '"kind":"checkpoint_restore","step_id":"log".*"paths":\["log.txt"\]' "$j" ||
	fail "the stale dependent log did not restore log.txt"

# E on append after the run: the edited step waits at its gate, then starts clean.
keys 1 g j
keys E
wait_count '"type":"step.edit"' 1
approve Append
approve Log
wait_count '"type":"run.end"' 3
[ "$(lines notes.txt)" = 1 ] || fail "notes.txt has $(lines notes.txt) lines after the edit"
[ "$(lines log.txt)" = 1 ] || fail "log.txt has $(lines log.txt) lines after the edit"
[ "$(grep -c '"kind":"checkpoint_restore","step_id":"append"' "$j")" -ge 2 ] ||
	fail "the edited step did not restore its files"
keys q
wait_for "PEVTUI-EXIT=0" 10
