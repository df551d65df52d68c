#!/bin/sh
# r at an open gate: it asks, naming the step and everything that depends on it; then
# the dependent's gate is withdrawn, the dependent goes stale, the step runs again, and
# only then the dependent's gate opens again — the run never ends on stale input.
. "$(dirname "$0")/lib.sh"

start 110 32 --demo
wait_for "Gate: Approve the plan"
keys a
wait_for "Gate: High-complexity step" 60
keys Escape
wait_gone "Gate: High-complexity step"
# Paused, nothing new starts: the stale marks stay on screen to be seen.
keys p
wait_for "paused"
keys 1 g j
keys r
wait_for "Run again: acme, memo\\?"
keys y
wait_for "◌ acme"
expect "◌ .*memo"
keys p
wait_for "resume sent|resumed"
j=$(ls "$TMPD"/runs/*/journal.jsonl | head -n 1)
n=0
until grep -q '"type":"gate.decision".*"step_id":"memo".*"decision":"withdrawn"' "$j"; do
	n=$((n + 1))
	[ $n -lt 300 ] || fail "memo's gate was not withdrawn"
	sleep 0.1
done
grep -q '"type":"step.state".*"step_id":"memo".*"state":"stale".*"cause":"acme"' "$j" ||
	fail "memo did not go stale because of acme"
# acme runs again, then memo's gate opens again (a second high gate).
n=0
until [ "$(grep -c '"type":"gate.open".*"gate":"high"' "$j")" -ge 2 ]; do
	n=$((n + 1))
	[ $n -lt 600 ] || fail "memo's gate did not open again"
	sleep 0.1
done
wait_for "Gate: High-complexity step" 30
keys a
wait_for "finished — passed" 60
[ "$(grep -c '"type":"step.start".*"step_id":"acme"' "$j")" -ge 2 ] || fail "acme did not run again"
# memo ran once, after acme's second pass.
last_acme=$(grep -n '"type":"step.end".*"step_id":"acme"' "$j" | tail -n 1 | cut -d: -f1)
memo=$(grep -n '"type":"step.start".*"step_id":"memo"' "$j" | head -n 1 | cut -d: -f1)
[ -n "$memo" ] && [ "$memo" -gt "$last_acme" ] || fail "memo started before acme passed again"
grep -q '"type":"operator.command".*"command":"rerun".*"force":true' "$j" ||
	fail "no forced rerun command journaled"
keys q
wait_for "PEVTUI-EXIT=0" 10
