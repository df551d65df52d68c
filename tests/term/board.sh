#!/bin/sh
# pevtui --board lists the runs with the live one waiting at its plan gate first; the
# filter hides what does not match; Enter attaches to the run, and leaving the run brings
# the board back, now showing the gate the run waits at next.
. "$(dirname "$0")/lib.sh"
. "$(dirname "$0")/attach_lib.sh"

"$PEVTUI" --headless --demo --yes --sim-delay 0 --runs-dir "$TMPD/runs" >/dev/null 2>&1 ||
	fail "the finished run did not pass"
"$PEVTUI" --detach --demo --sim-delay 0 --runs-dir "$TMPD/runs" 2>"$TMPD/detach.err" ||
	fail "--detach failed: $(cat "$TMPD/detach.err")"

start 140 20 --board
wait_for "2 runs · 1 gates waiting · sort: state" 15
wait_for "waiting +plan " 15
expect "passed "
# Live and waiting first.
screen | grep -A1 "^RUN" | tail -n 1 | grep -q "waiting" || fail "the waiting run is not first"

keys / w a i t Enter
wait_for "filter: wait" 10
wait_gone "passed " 10
keys / Escape
wait_for "passed " 10

keys g Enter
wait_for "Gate: Approve the plan" 30
keys a
wait_for "Gate: High-complexity step" 60
keys q
wait_for "waiting +high memo" 15
keys q
wait_for "PEVTUI-EXIT=0" 10
