#!/bin/sh
# Issue 29 item 9: the status line's last action goes after a few seconds on its own (it
# stayed for minutes and read as news), with no key pressed.
. "$(dirname "$0")/lib.sh"

start 120 30 --demo
wait_for "Gate: Approve the plan" 30
keys Escape
wait_gone "Gate: Approve the plan"
keys c
wait_for "no plan is in force yet" 5
t0=$(date +%s)
wait_gone "no plan is in force yet" 20
t1=$(date +%s)
[ $((t1 - t0)) -ge 4 ] || fail "the message went after $((t1 - t0)) s: too soon to be read"
keys q
wait_for "Quit now\\?" 10
keys y
wait_for "PEVTUI-EXIT=3" 10
