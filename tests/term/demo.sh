#!/bin/sh
# The demo from start to finish: the plan gate approved, every step passing, q quits.
. "$(dirname "$0")/lib.sh"

start 100 30 --demo --gate plan
wait_for "Gate: Approve the plan"
expect "a approve"
expect "─ Plan "
expect "─ Step log "
keys a
wait_for "finished — passed" 60
expect_titles
# every step shows the passed glyph; none is left pending or failed
expect "✓ acme "
expect "✓ brightline "
expect "✓ corvid "
expect "✓ .*memo "
refute "✗ [a-z]+ Review"
expect "Final answer|Run finished"
# after the run, q quits at once (no question)
keys q
wait_for "PEVTUI-EXIT=0" 10
refute "Quit now"
