#!/bin/sh
# Workspace changes in the cockpit: D on a step shows what each of its attempts changed as
# a scrollable diff (from the run's checkpoints); Enter on a step-log "workspace:" line
# opens that attempt's diff straight away; the Verdicts pane says what each verdict judged.
. "$(dirname "$0")/lib.sh"

start 120 40 --demo --gate none --parallel 1
wait_for "finished — passed" 60
# the Verdicts pane: the judged attempt's changes under each verdict
expect "judged: 1 file changed, \+[0-9]+ -0: \+memo\.md"
# the run row is selected at the end; brightline is two rows down
keys j j
wait_for "Step log .* brightline Review the Brightline"
keys D
wait_for "workspace changes · step brightline ─"
expect "│Attempt 1: 1 file changed, \+0 -0"
expect "│  A reviews/brightline-cleaning\.md  \+0 −0"
expect "│  checkpoints [0-9a-f]{12} → [0-9a-f]{12}"
expect "│\+\+\+ b/reviews/brightline-cleaning\.md"
expect "Esc back"
# the retry's attempt further down: scroll to it
keys G
wait_for "│\+- \*\*Liability \(cl\. 3\):\*\*"
expect "│@@ -0,0 \+1,[0-9]+ @@"
keys g
wait_for "│Attempt 1: 1 file changed"
keys Escape
wait_gone "workspace changes · step brightline"
expect_titles
# Enter on the step log's summary of attempt 2: its diff alone
keys 2
keys g
keys / "workspace: " Enter
wait_for "match 1/2"
keys n
wait_for "match 2/2"
keys Enter
wait_for "workspace changes · step brightline · attempt 2 ─"
expect "│Attempt 2: 1 file changed"
refute "│Attempt 1:"
# Esc: the event itself, then the cockpit
keys Escape
wait_for "step\.changes · step brightline · attempt 2"
keys c
wait_for "workspace changes · step brightline · attempt 2 ─"
keys Escape
keys Escape
wait_gone "step brightline · attempt 2"
expect_titles
keys q
wait_for "PEVTUI-EXIT=0" 10
