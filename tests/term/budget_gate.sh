#!/bin/sh
# The budget gate shows spend against the budget (text and bar); a continues the run;
# in a second run x asks, then stops it (aborted, exit 3).
. "$(dirname "$0")/lib.sh"

start 100 30 --demo --scenario generic --gate budget --budget 0.001
wait_for "Gate: Budget reached" 60
expect 'Spent [$]0\.[0-9]+ of the [$]0\.0010 budget'
expect "a continue  x stop the run"
expect "█"
keys s
wait_for "this gate cannot be skipped"
keys a
wait_for "finished — passed" 60
refute "Gate: Budget reached"
keys q
wait_for "PEVTUI-EXIT=0" 10
tmux -L "$SOCK" kill-server >/dev/null 2>&1

rm -rf "$TMPD/runs"
start 100 30 --demo --scenario generic --gate budget --budget 0.001
wait_for "Gate: Budget reached" 60
keys x
wait_for "Stop the run at the budget\\?"
keys y
wait_for "finished — aborted" 30
keys q
wait_for "PEVTUI-EXIT=3" 10
