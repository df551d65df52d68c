#!/bin/sh
# Issue 29 item 8: at any width the keys that answer the open gate stay visible, on the
# status line and on the dialog's frame (whole when they fit, else the keys alone, `?`
# for the rest); at 60 columns the status line dropped them and the frame cut "Esc hide".
# And the --gate error lists every gate kind.
. "$(dirname "$0")/lib.sh"

status() {
	screen | tail -n 1
}

start 60 24 --demo
wait_for "Gate: Approve the plan" 30
wait_for "a e E x  \\? help  Esc hide─┘"
status | grep -E -q "(a approve  e edit step  E edit plan  x reject|a e E x \\? help) *$" ||
	fail "the status line lacks the gate's keys: $(status)"
tmux -L "$SOCK" resize-window -x 40 -y 20
wait_width_le 40
wait_for "a e E x  \\? help  Esc hide─┘"
status | grep -E -q "a e E x \\? help *$" || fail "at 40 columns: $(status)"
keys a
# The high gate (a step's) has s too.
wait_for "Gate: High" 60
wait_for "a e E s x"
status | grep -E -q "a e E s x \\? help *$" || fail "at the high gate: $(status)"
keys q
wait_for "Quit now\\?" 10
keys y
wait_for "PEVTUI-EXIT=3" 10
tmux -L "$SOCK" kill-server >/dev/null 2>&1

start 80 24 --demo --gate plan,nope
wait_for "PEVTUI-EXIT=1" 10
for k in plan high replan shell budget step rewind mcp none; do
	grep -q "unknown gate \"nope\": use a comma list of .*\\b$k\\b" "$TMPD/stderr" ||
		fail "the --gate error leaves out $k: $(cat "$TMPD/stderr")"
done
