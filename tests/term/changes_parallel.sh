#!/bin/sh
# A step's changes are that step's (issue 25): under --parallel the demo's three reviews
# run at once, and D on brightline shows what its step.changes attributes to it — its own
# review — not acme's and corvid's files that the raw checkpoints saw change meanwhile; a
# shared file is marked shared.
. "$(dirname "$0")/lib.sh"

start 120 40 --demo --parallel 3 --gate none
wait_for "finished — passed" 60
j="$(ls -d "$TMPD"/runs/*/journal.jsonl 2>/dev/null | head -1)"
[ -n "$j" ] || fail "no journal"
stat="$(grep '"type":"step.changes","step_id":"brightline","attempt":1,' "$j" |
	sed 's/.*"stat":"\([^"]*\)".*/\1/' | head -1)"
[ -n "$stat" ] || fail "no step.changes for brightline's attempt 1"
# the Plan pane: run row, acme, brightline
keys 1 g j j
wait_for "Step log .* brightline"
keys D
wait_for "workspace changes · step brightline ─"
expect "│Attempt 1: $(printf '%s' "$stat" | sed 's/[+.]/\\&/g')"
expect "reviews/brightline"
refute "reviews/acme"
keys Escape
wait_gone "workspace changes · step brightline"
keys q
wait_for "PEVTUI-EXIT=0" 10
