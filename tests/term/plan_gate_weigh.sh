#!/bin/sh
# Issue 29 item 2: the plan gate opens with what the operator must weigh (over budget,
# high-complexity steps, tools that will ask) at the top, seen without scrolling; the
# estimate comes before the steps.
. "$(dirname "$0")/lib.sh"

start 120 40 --demo --budget 0.05
wait_for "Gate: Approve the plan" 30
wait_for "Over budget: the estimate \\\$[0-9.]+ is more than the \\\$[0-9.]+ left of the \\\$0\\.0500 budget"
expect "1 high-complexity step: memo \\(each asks again before it starts\\)"
expect "Tools that will ask: every shell command"
# At the top: the dialog is not scrolled, and the warning comes before the first step.
expect "↑↓ [0-9]+/"
first=$(screen | grep -n "Over budget" | head -n 1 | cut -d: -f1)
step=$(screen | grep -n "acme  Review" | head -n 1 | cut -d: -f1)
[ -n "$step" ] && [ "$first" -lt "$step" ] || fail "the warning is not above the steps"
keys q
wait_for "Quit now\\?" 10
keys y
wait_for "PEVTUI-EXIT=3" 10
tmux -L "$SOCK" kill-server >/dev/null 2>&1

# Nothing to weigh (no budget, no high step, --gate plan): no such lines.
rm -rf "$TMPD/runs"
start 120 40 --demo --scenario generic --gate plan
wait_for "Gate: Approve the plan" 30
wait_for "Estimated cost"
refute "Over budget"
refute "Tools that will ask"
keys q
wait_for "Quit now\\?" 10
keys y
wait_for "PEVTUI-EXIT=3" 10
