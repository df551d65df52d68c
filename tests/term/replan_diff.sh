#!/bin/sh
# At a replan gate the dialog shows what the new plan changes, a changed step field by field
# as a word diff ([-old-]{+new+}); c switches the Plan pane to the proposed revision and
# back; the run log and report.md hold the same diff.
. "$(dirname "$0")/lib.sh"

start 120 45 --demo --scenario replan
wait_for "Gate: Approve the plan"
keys a
wait_for "Gate: Replan after step boardings" 60
wait_for "Changes against revision 0, the plan in force:"
expect "~ note  Write the ridership note"
expect "depends on: network, \[-boardings-\][{][+]boardings-official[+][}]"
expect "\[-boardings\.md\.-\][{][+]sources/boardings\.md\.[+][}]"
expect "\+ boardings-official  Take 2023 boardings"
expect "c old/new plan"
expect "─ Plan ─+ rev 0 · c: proposed rev 1 ─"
expect "│◆ boardings Count 2023"

# The proposed revision, each step marked against the plan in force.
keys c
wait_for "─ Plan ─+ proposed rev 1 · c: rev 0 in force ─"
expect "│= network Describe the tram network +l same"
expect "│\+ boardings-official Take"
expect "│~ └ note "
refute "│◆ boardings Count 2023"
# Back to the plan in force.
keys c
wait_for "─ Plan ─+ rev 0 · c: proposed rev 1 ─"
expect "│◆ boardings Count 2023"
refute "│\+ boardings-official Take"

# The run log (the run row, with the dialog put aside) tells the same diff.
keys Escape
wait_gone "Gate: Replan after step boardings"
keys 1 g
wait_for "─ Step log ─+ run ─"
wait_for "depends on: network, \[-boardings-\][{][+]boardings-official[+][}]"
keys Enter
wait_for "Gate: Replan after step boardings"
keys a
wait_for "finished — passed" 60
# The proposal is the plan in force now: nothing to switch to.
wait_for "─ Plan ─+ rev 1 ─"
keys c
wait_for "c shows the proposed plan while a replan gate is open"
expect "─ Plan ─+ rev 1 ─"
report=$(ls "$TMPD"/runs/*/report.md)
grep -q '^## Replans$' "$report" || fail "report.md has no Replans section"
grep -q '^### Revision 1, after step boardings failed$' "$report" ||
	fail "report.md does not name the replan"
grep -q '^    depends on: network, \[-boardings-\]{+boardings-official+}$' "$report" ||
	fail "report.md lacks the word diff of the dependencies"
keys q
wait_for "PEVTUI-EXIT=0" 10
