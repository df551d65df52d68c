#!/bin/sh
# The budget gate shows spend against the budget (text and bar); a continues the run;
# in a second run x asks, then stops it (aborted, exit 3).
. "$(dirname "$0")/lib.sh"

start 100 30 --demo --scenario generic --gate budget --budget 0.001
wait_for "Gate: Budget reached" 60
expect 'Spent [$]0\.[0-9]+ of the [$]0\.0010 budget'
expect "a \+50%  d double  e set the cap  x stop the run"
expect "█"
keys s
wait_for "this gate cannot be skipped"
# d doubles the cap; the check is armed again at it, so the gate comes back.
keys d
wait_for "budget raised to [$]0\.0020" 30
wait_for "Gate: Budget reached" 60
expect 'of the [$]0\.0020 budget'
# e takes a figure.
keys e
wait_for "New budget"
keys C-u "5"
keys Enter
wait_for "finished — passed" 90
wait_gone "Gate: Budget reached"
j=$(ls "$TMPD"/runs/*/journal.jsonl | head -n 1)
grep -q '"type":"gate.decision".*"gate":"budget".*"budget_usd":5' "$j" ||
	fail "no budget decision with the typed cap"
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
