#!/bin/sh
# q while the run is live asks first; n keeps running; y quits with the run resumable.
. "$(dirname "$0")/lib.sh"

start 100 30 --demo
wait_for "Gate: Approve the plan"
keys q
wait_for "Quit now\?"
keys n
wait_for "cancelled"
refute "Quit now"
refute "PEVTUI-EXIT"
keys q
wait_for "Quit now\?"
keys y
wait_for "PEVTUI-EXIT=3" 15
grep -q -- "--resume" "$TMPD/stderr" || fail "no resume hint on stderr"
