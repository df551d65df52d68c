#!/bin/sh
# --resume opens on the run as it stood: the Plan pane with the steps that passed, the
# spend so far (the journal's sum), the budget and a clock that did not start at zero.
. "$(dirname "$0")/lib.sh"

start 100 30 --demo --budget 5
wait_for "Gate: Approve the plan"
keys a
wait_for "Gate: High-complexity step" 60
keys q
wait_for "Quit now\?"
keys y
wait_for "PEVTUI-EXIT=3" 15
rundir=$(ls -d "$TMPD"/runs/*/ | head -n 1)
[ -f "$rundir/journal.jsonl" ] || fail "no journal from the first run"
# The spend as the journal has it, as the Cost pane prints it.
spent=$(grep -o '"cost_usd":[0-9.eE+-]*' "$rundir/journal.jsonl" |
	awk -F: '{ s += $2 } END { printf "%.4f", s }')
[ "$spent" != "0.0000" ] || fail "the first run spent nothing: cannot check the spend"

# A server of its own for the second program (cleanup ends it); the first one goes now.
tmux -L "$SOCK" kill-server >/dev/null 2>&1
SOCK="$SOCK-resume"
start 100 30 --resume "$rundir"
wait_for "─ Plan "
wait_for "✓ acme "
expect "✓ brightline "
expect "✓ corvid "
expect "total \\\$$spent "
refute "total \\\$0\.0000 "
expect "budget "
refute "· 0\.0s ·"
refute "Waiting for events"
# The run goes on from there: the gate it stopped at is asked again.
wait_for "Gate: High-complexity step" 30
keys q
wait_for "Quit now\?"
keys y
wait_for "PEVTUI-EXIT=3" 15
