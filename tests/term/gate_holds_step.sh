#!/bin/sh
# A gate holds only its step: with a gate before every step, approving northgate while
# riverside's gate stays open lets northgate run, pass and finish (✓) behind the dialog.
. "$(dirname "$0")/lib.sh"

start 120 34 --demo --scenario dag --gate plan,step --sim-delay 5
wait_for "Gate: Approve the plan"
keys a
wait_for "Gate: .*northgate|Gate: Step northgate|northgate" 30
wait_for "Gate: " 30
# The first step gate is northgate's: approve it; riverside's comes next and stays open.
expect "northgate"
keys a
wait_for "riverside" 30
j=$(ls "$TMPD"/runs/*/journal.jsonl | head -n 1)
# northgate passes and ends while riverside still waits at its gate.
n=0
until grep -q '"type":"step.end".*"step_id":"northgate".*"status":"passed"' "$j" 2>/dev/null; do
	n=$((n + 1))
	[ $n -lt 300 ] || fail "northgate never ended while riverside's gate was open"
	sleep 0.1
done
grep -q '"type":"gate.decision".*"step_id":"riverside"' "$j" &&
	fail "riverside's gate was answered before northgate ended"
wait_for "✓ northgate"
expect "riverside"
# Its clock stopped: riverside shows as waiting in the Plan pane.
expect "◆ riverside"
keys q
wait_for "Quit now\\?"
keys y
wait_for "PEVTUI-EXIT=3" 10
