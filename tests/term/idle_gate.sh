#!/bin/sh
# An idle screen waiting at a gate uses no CPU: no timer wakes the UI thread, and the
# engine thread sleeps on the gate. Counted as context switches of every thread of the
# process over three seconds (a 100 ms spinner timer alone would make about thirty).
. "$(dirname "$0")/lib.sh"

[ -r /proc/self/status ] || { echo "no /proc: skipped"; exit 77; }
# ThreadSanitizer's runtime has a thread of its own that wakes periodically.
if grep -q "__tsan_init" "$PEVTUI" 2>/dev/null; then
	echo "built with ThreadSanitizer: its runtime wakes on its own; skipped"
	exit 77
fi
start 100 30 --demo
wait_for "Gate: Approve the plan" 30
shpid=$(tmux -L "$SOCK" display-message -p '#{pane_pid}')
pid=$(pgrep -P "$shpid" | head -n 1)
# The shell waits for a thin waiter (tui/detach.h); the cockpit is its child.
child=$(pgrep -P "$pid" | head -n 1)
[ -n "$child" ] && pid=$child
[ -n "$pid" ] && [ -d "/proc/$pid" ] || fail "cannot find the pevtui process"
switches() {
	cat /proc/"$pid"/task/*/status 2>/dev/null |
		awk '/^(non)?voluntary_ctxt_switches/ { n += $2 } END { print n + 0 }'
}
ticks() {
	awk '{ print $14 + $15 }' /proc/"$pid"/stat
}
sleep 0.5
s0=$(switches)
t0=$(ticks)
sleep 3
s1=$(switches)
t1=$(ticks)
echo "idle at a gate for 3 s: $((s1 - s0)) context switches, $((t1 - t0)) CPU ticks"
[ $((s1 - s0)) -le 3 ] || fail "the idle screen woke $((s1 - s0)) times in 3 s"
[ $((t1 - t0)) -le 1 ] || fail "the idle screen used $((t1 - t0)) CPU ticks in 3 s"
expect "Gate: Approve the plan"
keys q
wait_for "Quit now\\?" 10
keys y
wait_for "PEVTUI-EXIT=3" 10
