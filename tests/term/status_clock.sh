#!/bin/sh
# Issue 29 item 3: while a gate waits, the status line's clock goes on (once a second),
# with no key pressed and nothing else redrawing.
. "$(dirname "$0")/lib.sh"

clock() {
	screen | tail -n 1 | sed -n 's/.*waiting for you · \([0-9.:]*\)s\{0,1\} .*/\1/p'
}

start 120 40 --demo
wait_for "Gate: Approve the plan" 30
wait_for "waiting for you · [0-9]"
c0=$(clock)
[ -n "$c0" ] || fail "no clock on the status line"
# Two ticks, each within a bounded wait.
for t in 1 2; do
	n=0
	while [ "$(clock)" = "$c0" ]; do
		n=$((n + 1))
		[ $n -lt 30 ] || fail "the clock stood at $c0 for 3 s while the gate waited"
		sleep 0.1
	done
	c1=$(clock)
	awk -v a="$c0" -v b="$c1" 'BEGIN { exit !(b + 0 > a + 0) }' ||
		fail "the clock went from $c0 to $c1"
	c0=$c1
done
keys q
wait_for "Quit now\\?" 10
keys y
wait_for "PEVTUI-EXIT=3" 10
