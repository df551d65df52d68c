#!/bin/sh
# Issue 29 item 6: G in the Plan pane selects its last row and g its first, as the help
# says ("g/G top / bottom") and every pager does. The Step log's title names the row
# selected: the run (the goal row) or the step.
. "$(dirname "$0")/lib.sh"

start 120 40 --demo
wait_for "Gate: Approve the plan" 30
keys Escape
wait_gone "Gate: Approve the plan"
wait_for "─ Step log ─+ run ─"
keys G
wait_for "─ Step log ─+ memo Write the risk memo"
keys g
wait_for "─ Step log ─+ run ─"
keys G
wait_for "─ Step log ─+ memo Write the risk memo"
keys q
wait_for "Quit now\\?" 10
keys y
wait_for "PEVTUI-EXIT=3" 10
