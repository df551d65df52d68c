#!/bin/sh
# Issue 29 item 9: the run log shows the final answer once, under "Final answer:", as it
# streams (it printed the streamed text, then the whole answer again). The Cost pane says
# the models are simulated (issue 29: "sim-planner" and its dollars read as real).
. "$(dirname "$0")/lib.sh"

start 120 70 --demo --gate none
wait_for "finished" 90
keys g
wait_for "─ Step log ─+ run ─"
wait_for "Run finished: passed"
n=$(screen | grep -c "Risk memo for the operations director (full text")
[ "$n" -eq 1 ] || fail "the answer's first line is on screen $n times"
n=$(screen | grep -c "Final answer:")
[ "$n" -eq 1 ] || fail "\"Final answer:\" is on screen $n times"
expect "─ Cost ─+ simulated models ─"
expect "total \\\$[0-9.]+  estimate \\\$[0-9.]+  \\(simulated\\)"
keys q
wait_for "PEVTUI-EXIT=0" 10
