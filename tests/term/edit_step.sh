#!/bin/sh
# E at the high-complexity gate opens $EDITOR on the step. The editor script first saves
# broken JSON: the editor must reopen with the error as a comment on top. The second time
# it rewrites a criterion; the edited step then runs and passes.
. "$(dirname "$0")/lib.sh"

cat >"$TMPD/editor.sh" <<EOS
#!/bin/sh
if grep -q '^// pevtui:' "\$1"; then
	grep '^// pevtui:' "\$1" >"$TMPD/errors-seen"
	sed 's/every notice deadline is stated as a date/every notice deadline is stated as a calendar date/' \
		"$TMPD/original.json" >"\$1"
else
	cp "\$1" "$TMPD/original.json"
	printf '{ "step_id": "memo", broken\n' >"\$1"
fi
EOS
chmod +x "$TMPD/editor.sh"
TEST_ENV="VISUAL= EDITOR=$TMPD/editor.sh"

start 100 30 --demo
wait_for "Gate: Approve the plan"
keys a
wait_for "Gate: High-complexity step" 60
expect "stated as a date"
keys E
# An edit is not an approval: the same gate comes back with the new text, marked.
wait_for "Edited at this gate" 30
expect "Gate: High-complexity step"
expect "calendar date"
journal=$(ls "$TMPD"/runs/*/journal.jsonl)
grep -q '"type":"step.start".*"step_id":"memo"' "$journal" && fail "memo started before approval"
keys a
wait_for "finished — passed" 60
expect "✓ .*memo "
[ -s "$TMPD/errors-seen" ] || fail "the editor was not reopened with the errors on top"
grep -q "not valid JSON" "$TMPD/errors-seen" || fail "the error comment does not say what is wrong"
journal=$(ls "$TMPD"/runs/*/journal.jsonl)
grep -q '"type":"step.edit".*calendar date' "$journal" || fail "no step.edit with the new criterion"
grep -q '"type":"operator.command".*"command":"edit"' "$journal" ||
	fail "no operator.command for the edit"
[ "$(grep -c '"type":"gate.open".*"gate":"high"' "$journal")" -eq 1 ] ||
	fail "the edit closed the gate and opened another"
grep -q '"type":"gate.decision".*"gate":"high".*"decision":"approve"' "$journal" ||
	fail "the gate was not approved after the edit"
keys q
wait_for "PEVTUI-EXIT=0" 10
