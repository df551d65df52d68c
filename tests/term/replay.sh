#!/bin/sh
# --replay browses a finished run through the same screen: it opens at the end, steps
# back to the start, jumps from gate to gate and verdict to verdict, and sends nothing.
. "$(dirname "$0")/lib.sh"

"$PEVTUI" --headless --demo --yes --sim-delay 0 --runs-dir "$TMPD/runs" >/dev/null 2>&1
rundir=$(ls -d "$TMPD"/runs/*/ | head -n 1)
[ -f "$rundir/journal.jsonl" ] || { echo "no journal from the headless run"; exit 1; }
total=$(wc -l <"$rundir/journal.jsonl")

start 110 30 --replay "$rundir"
wait_for "replay $total/$total"
expect "finished — passed"
expect "✓ acme "
keys 0
wait_for "replay 0/$total"
keys '>'
wait_for "Gate: Approve the plan"
expect "replay: read-only"
keys a
wait_for "replay is read-only"
keys v
wait_for "Verdicts .* 1 ─"
keys v
wait_for "Verdicts .* 2 ─"
keys ','
wait_for "Verdicts .* 1 ─"
keys '$'
wait_for "replay $total/$total"
keys q
wait_for "PEVTUI-EXIT=0" 10

[ "$(wc -l <"$rundir/journal.jsonl")" -eq "$total" ] || fail "the replay wrote to the journal"
