#!/bin/sh
# q while the run is live asks first; n keeps running; y quits with the run resumable. The
# question says Q detaches instead (issue 29), whole even at 60 columns, and Q there does.
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
tmux -L "$SOCK" kill-server >/dev/null 2>&1

start 60 24 --demo
wait_for "Gate: Approve the plan"
keys q
wait_for "Quit now\\?"
wait_for "Q instead leaves it"
wait_for "pevtui --attach comes back to it"
expect "y yes  Q detach"
keys Q
wait_for "PEVTUI-EXIT=0" 15
grep -q "detached; run .* goes on" "$TMPD/stderr" || fail "Q did not detach: $(cat "$TMPD/stderr")"
