#!/bin/sh
# Workspace changes in the cockpit, on the checkpoints demo: the retry's restore is in the
# step log; D on a step shows what each of its attempts changed as a scrollable diff (from
# the run's checkpoints); Enter on a step-log "workspace:" line opens that attempt's diff
# straight away; the Verdicts pane says what each verdict judged.
. "$(dirname "$0")/lib.sh"

start 110 24 --demo --scenario checkpoints --gate none
wait_for "finished — passed" 60
# the Verdicts pane: the judged attempt's changes under each verdict
expect "judged: 1 file changed, \+3 -0: \+release-notes\.md"
# the run row is selected at the end; changelog is the next row
keys j
wait_for "Step log .* changelog Add 1\.4 to the changelog"
keys t
wait_for "step changelog · 4 of 6"
expect "judged: 1 file changed, \+1 -0: CHANGELOG\.md"
keys t
wait_gone "step changelog · 4 of 6"
# the retry put the file back first
keys 2
keys g
keys / "starts again" Enter
wait_for "match 1/1: starts again"
expect "│step changelog starts again from where it first started"
expect "│restored \(CHANGELOG\.md\)"
keys D
wait_for "workspace changes · step changelog · attempt 2 ─"
# D with the log focused: the selected line's attempt; from the Plan pane: every attempt
keys Escape
wait_gone "workspace changes · step changelog"
keys 1
keys D
wait_for "workspace changes · step changelog ─"
expect "│Attempt 1: 1 file changed, \+1 -0"
expect "│  M CHANGELOG\.md  \+1 −0"
expect "│  checkpoints [0-9a-f]{12} → [0-9a-f]{12}"
expect "│--- a/CHANGELOG\.md"
expect "│\+- 1\.4: export to CSV  "
refute "│\+- 1\.4: export to CSV \(#212\)"
expect "Esc back"
# the retry's attempt further down: its own line on the file as it was, not a second one
keys G
wait_for "│Attempt 2: 1 file changed, \+1 -0"
wait_for "│\+- 1\.4: export to CSV \(#212\)"
expect "│ - 1\.3: search is twice as fast"
keys g
wait_for "│Attempt 1: 1 file changed"
keys Escape
wait_gone "workspace changes · step changelog"
expect_titles
# Enter on the step log's summary of attempt 1: its diff alone
keys 2
keys g
keys / "workspace: " Enter
wait_for "match 1/2"
keys Enter
wait_for "workspace changes · step changelog · attempt 1 ─"
expect "│Attempt 1: 1 file changed"
refute "│Attempt 2:"
# Esc: the event itself (c opens the diff again), then the cockpit
keys Escape
wait_for "step\.changes · step changelog · attempt 1"
keys c
wait_for "workspace changes · step changelog · attempt 1 ─"
keys Escape
wait_for "step\.changes · step changelog · attempt 1"
keys Escape
wait_gone "step changelog · attempt 1"
expect_titles
keys q
wait_for "PEVTUI-EXIT=0" 10
