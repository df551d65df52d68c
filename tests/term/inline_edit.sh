#!/bin/sh
# e at a high-complexity gate opens the inline form; a criterion rewritten there is sent
# as the gate's edit, and the edited step runs and passes.
. "$(dirname "$0")/lib.sh"

start 100 30 --demo
wait_for "Gate: Approve the plan"
keys a
wait_for "Gate: High-complexity step" 60
keys e
wait_for "Edit step memo"
expect "Criterion 2 +every notice deadline is stated as a date"
# A field too long for the form, not focused, shows its start and "…" (issue 29).
expect "Description +From the three reviews.*…"
# Name, Description, Complexity, Criterion 1 → Criterion 2
keys Tab Tab Tab Tab
keys C-u "every deadline is a calendar date"
wait_for "Criterion 2 +every deadline is a calendar date"
keys C-s
wait_for "Edited at this gate" 30
expect "\+ criterion: every deadline is a calendar date"
keys a
wait_for "finished — passed" 60
journal=$(ls "$TMPD"/runs/*/journal.jsonl)
grep -q '"type":"step.edit".*every deadline is a calendar date' "$journal" ||
	fail "no step.edit with the rewritten criterion"
keys q
wait_for "PEVTUI-EXIT=0" 10
