#!/bin/sh
# A run started with --detach has no screen; two cockpits attach to it at once. Both show
# its plan gate; both answer it: the first answer wins (one gate.decision in the journal)
# and both go on to the next gate. One answers that; both see the run finish. q leaves an
# attached cockpit at once: the run is not its to stop.
. "$(dirname "$0")/lib.sh"
. "$(dirname "$0")/attach_lib.sh"

"$PEVTUI" --detach --demo --sim-delay 0 --runs-dir "$TMPD/runs" 2>"$TMPD/detach.err" ||
	fail "--detach failed: $(cat "$TMPD/detach.err")"
grep -q "started detached" "$TMPD/detach.err" || fail "$(cat "$TMPD/detach.err")"
id=$(ls "$TMPD/runs")
grep -q "pevtui --attach $id" "$TMPD/detach.err" || fail "no attach hint: $(cat "$TMPD/detach.err")"
wait_state running

start 100 30 --attach last
# The second cockpit signals gates as a cockpit does ([ui] notify_cmd).
printf '[ui]\nnotify_cmd = echo "$PEVTUI_RUN_ID $PEVTUI_GATE" > "%s/n.$$" && mv "%s/n.$$" "%s/notified.$PEVTUI_GATE"\n' \
	"$TMPD" "$TMPD" "$TMPD" >"$TMPD/config"
cockpit two --attach "$id" --config "$TMPD/config"
wait_for "Gate: Approve the plan" 30
wait_in two "Gate: Approve the plan" 30
tmux -L "$SOCK" send-keys -t two a \; send-keys -t 0 a
wait_for "Gate: High-complexity step" 60
wait_in two "Gate: High-complexity step" 60
[ "$(gate_decisions 1)" = 1 ] || fail "the plan gate was decided $(gate_decisions 1) times"
n=0
until [ -f "$TMPD/notified.high" ]; do
	[ $n -lt 100 ] || fail "the attached cockpit did not signal the high gate"
	sleep 0.1
	n=$((n + 1))
done
grep -q "^$id high\$" "$TMPD/notified.high" || fail "notify_cmd got: $(cat "$TMPD/notified.high")"

# q with the run live: no question, the cockpit goes, the run stays.
keys q
wait_for "PEVTUI-EXIT=0" 10
grep -q "left run $id; it goes on" "$TMPD/stderr" || fail "$(cat "$TMPD/stderr")"
wait_state running

tmux -L "$SOCK" send-keys -t two a
wait_in two "finished — passed" 60
[ "$(gate_decisions 2)" = 1 ] || fail "the high gate was decided $(gate_decisions 2) times"
# A detached run stays at its end while a cockpit is attached (an edit or a re-run there
# reopens it: tests/term/reopen.sh); the last cockpit leaving takes the engine with it.
wait_state running
tmux -L "$SOCK" send-keys -t two q
wait_in two "two-EXIT=0" 10
wait_state passed
