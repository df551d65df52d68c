#!/bin/sh
# A replan gate shows the new plan as a diff against the old one; approving adopts it.
. "$(dirname "$0")/lib.sh"

start 100 30 --demo --scenario replan
wait_for "Gate: Approve the plan"
keys a
wait_for "Gate: Replan after step boardings" 60
expect "\+ boardings-official"
expect "= network"
expect "keep old plan"
# The added step is shown whole: the removed one is further down.
keys NPage
wait_for "- boardings "
keys a
wait_for "finished — passed" 60
wait_for "rev 1"
expect "✓ .*boardings-official"
refute "boardings Count 2023"
keys q
wait_for "PEVTUI-EXIT=0" 10
