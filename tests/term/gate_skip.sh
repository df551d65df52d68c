#!/bin/sh
# A high-complexity gate answered with s: the step is skipped and the run ends partial.
# Before that, E with an editor that changes nothing leaves the gate open and unchanged.
. "$(dirname "$0")/lib.sh"

TEST_ENV="VISUAL= EDITOR=true"
start 100 30 --demo
wait_for "Gate: Approve the plan"
keys a
wait_for "Gate: High-complexity step" 60
expect "s skip"
expect "Inputs from:"
keys E
wait_for "unchanged; nothing was edited"
expect "Gate: High-complexity step"
keys s
wait_for "finished — partial" 60
expect "» .*memo"
refute "Gate: High-complexity"
keys q
wait_for "PEVTUI-EXIT=2" 10
