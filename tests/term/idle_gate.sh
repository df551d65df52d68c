#!/bin/sh
# A screen waiting at a gate uses no CPU: only the status line's clock wakes the UI thread,
# once a second (issue 29), and the engine thread sleeps on the gate; a finished run, with
# nothing waiting or running, wakes nothing at all. Counted as context switches of every
# thread of the process over three seconds (a 100 ms spinner timer alone would make about
# thirty).
. "$(dirname "$0")/lib.sh"

[ -r /proc/self/status ] || { echo "no /proc: skipped"; exit 77; }
# ThreadSanitizer's runtime has a thread of its own that wakes periodically.
if grep -q "__tsan_init" "$PEVTUI" 2>/dev/null; then
	echo "built with ThreadSanitizer: its runtime wakes on its own; skipped"
	exit 77
fi
# pevtui_pid — the cockpit of the session started last.
pevtui_pid() {
	shpid=$(tmux -L "$SOCK" display-message -p '#{pane_pid}')
	pid=$(pgrep -P "$shpid" | head -n 1)
	# The shell waits for a thin waiter (tui/detach.h); the cockpit is its child.
	child=$(pgrep -P "$pid" | head -n 1)
	[ -n "$child" ] && pid=$child
	[ -n "$pid" ] && [ -d "/proc/$pid" ] || fail "cannot find the pevtui process"
}
switches() {
	cat /proc/"$pid"/task/*/status 2>/dev/null |
		awk '/^(non)?voluntary_ctxt_switches/ { n += $2 } END { print n + 0 }'
}
ticks() {
	awk '{ print $14 + $15 }' /proc/"$pid"/stat
}
# measure WHAT MAX_SWITCHES — three seconds of the cockpit left alone.
measure() {
	sleep 0.5
	s0=$(switches)
	t0=$(ticks)
	sleep 3
	s1=$(switches)
	t1=$(ticks)
	echo "$1 for 3 s: $((s1 - s0)) context switches, $((t1 - t0)) CPU ticks"
	[ $((s1 - s0)) -le "$2" ] || fail "$1: woke $((s1 - s0)) times in 3 s"
	[ $((t1 - t0)) -le 1 ] || fail "$1: used $((t1 - t0)) CPU ticks in 3 s"
}

start 100 30 --demo
wait_for "Gate: Approve the plan" 30
pevtui_pid
# The clock: a wake and a redraw a second, about two switches each.
measure "waiting at a gate" 9
expect "Gate: Approve the plan"
keys q
wait_for "Quit now\\?" 10
keys y
wait_for "PEVTUI-EXIT=3" 10

# Finished, the cockpit still open: nothing moves, nothing wakes.
start 100 30 --demo --gate none
wait_for "finished" 60
pevtui_pid
measure "finished, nothing waiting" 3
keys q
wait_for "PEVTUI-EXIT=[0-9]" 10
