#!/bin/sh
# The terminal goes away (the tmux pane is killed: SIGHUP) while the run waits at a gate:
# the cockpit detaches without asking, the run goes on, a new cockpit attaches and the run
# finishes. Then, with its engine killed, --attach says so and names --resume.
. "$(dirname "$0")/lib.sh"
. "$(dirname "$0")/attach_lib.sh"

start 100 30 --demo
wait_for "Gate: Approve the plan" 30
keys a
wait_for "Gate: High-complexity step" 60
rundir=$(ls -d "$TMPD"/runs/*/)
pid=$(cat "$rundir/lock")
[ -n "$pid" ] && kill -0 "$pid" || fail "no engine pid in $rundir/lock"
tmux -L "$SOCK" kill-pane -t 0
wait_file "$rundir/engine.log" "detached" 15
kill -0 "$pid" || fail "the run died with its terminal"
wait_state running

SOCK="$SOCK-2"
start 100 30 --attach last
wait_for "Gate: High-complexity step" 30
keys a
wait_for "finished — passed" 60
keys q
wait_for "PEVTUI-EXIT=0" 10
wait_state passed

# A run whose engine was killed: attach says so and offers --resume.
tmux -L "$SOCK" kill-server >/dev/null 2>&1
rm -rf "$TMPD/runs"
"$PEVTUI" --detach --demo --sim-delay 0 --runs-dir "$TMPD/runs" 2>"$TMPD/detach.err" ||
	fail "--detach failed: $(cat "$TMPD/detach.err")"
rundir=$(ls -d "$TMPD"/runs/*/)
id=$(basename "$rundir")
kill -9 "$(cat "$rundir/lock")"
wait_state unfinished
SOCK="$SOCK-3"
start 100 30 --attach "$id"
wait_for "PEVTUI-EXIT=1" 10
grep -q "the engine of run $id is not running" "$TMPD/stderr" || fail "$(cat "$TMPD/stderr")"
grep -q "pevtui --resume $id" "$TMPD/stderr" || fail "$(cat "$TMPD/stderr")"
