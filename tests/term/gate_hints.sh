#!/bin/sh
# The status line lists the keys of the gate shown: no "s skip" at the plan and budget
# gates, which cannot be skipped; "s skip" at a step's gate. The arrows scroll a gate
# dialog that has more than it shows.
. "$(dirname "$0")/lib.sh"

status() {
	screen | tail -n 1
}

start 140 24 --demo
wait_for "Gate: Approve the plan"
wait_for "a approve  e edit step  E edit plan  x reject"
status | grep -q " s " && fail "the plan gate offers s: $(status)"
# The plan gate's body is longer than the dialog at 24 rows: the arrows scroll it.
wait_for "↑↓ [0-9]+/[0-9]+ "
first=$(screen | grep -o "↑↓ [0-9]*/" | head -n 1)
keys Down
n=0
while [ "$(screen | grep -o '↑↓ [0-9]*/' | head -n 1)" = "$first" ]; do
	n=$((n + 1))
	[ $n -gt 50 ] && fail "Down did not scroll the gate dialog"
	sleep 0.1
done
keys Up
wait_for "$first"
keys a
wait_for "Gate: High-complexity step" 60
wait_for "a approve  e edit  E edit JSON  s skip  x reject"
keys q
wait_for "Quit now\?"
keys y
wait_for "PEVTUI-EXIT=3" 15
tmux -L "$SOCK" kill-server >/dev/null 2>&1

SOCK="$SOCK-budget"
rm -rf "$TMPD/runs"
start 100 30 --demo --scenario generic --gate budget --budget 0.001
wait_for "Gate: Budget reached" 60
wait_for "a \+50%  d double  e set the cap  x stop the run"
status | grep -q " s " && fail "the budget gate offers s: $(status)"
keys x
wait_for "Stop the run at the budget\\?"
keys y
wait_for "finished — aborted" 30
keys q
wait_for "PEVTUI-EXIT=3" 10
