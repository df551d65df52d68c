#!/bin/sh
# D in the cockpit gives the shell back and the run goes on without its screen (stderr to
# engine.log in the run folder); --attach comes back to it, at the gate it waits at, and
# the run finishes there.
. "$(dirname "$0")/lib.sh"
. "$(dirname "$0")/attach_lib.sh"

start 100 30 --demo
wait_for "Gate: Approve the plan" 30
keys Q
wait_for "PEVTUI-EXIT=0" 15
grep -q "detached; run .* goes on" "$TMPD/stderr" || fail "$(cat "$TMPD/stderr")"
grep -q "attach again with: pevtui --attach" "$TMPD/stderr" || fail "$(cat "$TMPD/stderr")"
wait_state running
rundir=$(ls -d "$TMPD"/runs/*/)
wait_file "$rundir/engine.log" "detached" 10

cockpit again --attach last
wait_in again "Gate: Approve the plan" 30
tmux -L "$SOCK" send-keys -t again a
wait_in again "Gate: High-complexity step" 60
tmux -L "$SOCK" send-keys -t again a
wait_in again "finished — passed" 60
# It stays at its end while the cockpit is attached, and leaves with it.
tmux -L "$SOCK" send-keys -t again q
wait_in again "again-EXIT=0" 10
wait_state passed
grep -q '"type":"run.end","status":"passed"' "$rundir/journal.jsonl" ||
	grep -q '"status":"passed","exit_code":0' "$rundir/journal.jsonl" || fail "no run.end"
