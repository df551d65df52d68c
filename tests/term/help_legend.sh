#!/bin/sh
# ? shows the keys and a legend of what the panes draw: the Plan glyphs from the glyphs the
# pane uses, its columns, and the Cost notation further down (j scrolls); any other key
# closes it.
. "$(dirname "$0")/lib.sh"

start 100 30 --demo
wait_for "Gate: Approve the plan"
keys '?'
wait_for "Keys and legend"
expect "a +approve the gate"
# The frame says what the keys do there (it said "any key closes" while j/k scrolled).
expect "j/k ↓↑ scroll  any other key closes"
# j scrolls down to the legend
scroll_to() {
	n=0
	while ! screen | grep -E -q -- "$1"; do
		n=$((n + 1))
		[ $n -gt 80 ] && fail "never came into view: $1"
		keys j
		sleep 0.05
	done
}
scroll_to "Plan pane: one row per step"
scroll_to "◆ +waiting at its own gate"
scroll_to "h ×2 1:05 +right columns: complexity"
scroll_to "Cost pane: one row per role"
scroll_to "1\.2k→450 +input tokens → output tokens"
scroll_to "[$]0\.01\+\? +some calls have no known price"
scroll_to "Verdicts pane: newest first"
keys x
wait_gone "Keys and legend"
expect "Gate: Approve the plan"
keys q
wait_for "Quit now\?"
keys y
wait_for "PEVTUI-EXIT=3" 15
