#!/bin/sh
# Drill-down: Enter on a step-log line opens it whole — a tool call with its arguments and
# its full output, the executor's result by its fields, the next entry with → — and Esc
# comes back to the log. t makes the Verdicts pane follow the selected step.
. "$(dirname "$0")/lib.sh"

start 120 40 --demo --gate none
wait_for "finished — passed" 60
# the run row is selected at the end; brightline is two rows down
keys j j
wait_for "Step log .* brightline Review the Brightline"
keys 2
# the top of the log, then the first write_file call (attempt 1) by search
keys g
keys / write_file Enter
keys Enter
wait_for "tool call · step brightline · attempt 1"
expect "tool.call · step brightline · attempt 1 · journal seq"
expect "→ write_file  \(call "
expect "Arguments"
expect "  path: reviews/brightline-cleaning.md"
# its result on the same page, the whole output as lines
expect "← write_file ok"
expect "Kept in the run folder: attempts/brightline/1/tool-[0-9]+\.txt"
refute "\[2J|\\\\n"
keys Escape
wait_gone "tool call · step brightline"
expect_titles
expect "→ write_file \{\"path\":\"reviews/brightline-cleaning.md\""
# the read_file result before it: the contract, line by line, not a 200-character summary
keys / read_file Enter
keys Enter
wait_for "tool (call|result) · step brightline · attempt 1"
wait_for "  5\. Termination\. The Customer may terminate for convenience"
expect "SERVICES CONTRACT - OFFICE CLEANING"
keys Escape
wait_gone "tool (call|result) · step brightline"
# the executor's result, by its fields
keys / "Result in" Enter
keys Enter
wait_for "result · step brightline · attempt 1"
expect "^│Findings"
expect "^│Artifacts"
expect "1\. reviews/brightline-cleaning\.md"
expect "Meets criteria: yes"
expect "Confidence: 0\.[0-9][0-9]"
refute "\"step_output\"|\"meets_criteria\""
# → the next entry: the verdict that sent the attempt back
keys Right
wait_for "verdict · step brightline · attempt 1"
expect "Verdict: retry"
expect "declared artifacts exist and are not empty"
keys Escape
wait_gone "verdict · step brightline"
expect "─ Step log .* brightline"
# the Verdicts pane: only this step's verdicts, then every step's again
keys t
wait_for "step brightline · 3 of [0-9]+"
keys t
wait_gone "step brightline · 3 of"
keys q
wait_for "PEVTUI-EXIT=0" 10
