#!/bin/sh
# The mouse: SGR reports are asked for even where the terminal description does not name
# them (tmux's screen-256color), so a wheel turn past column 223 lands; --no-mouse leaves
# the mouse to the terminal.
. "$(dirname "$0")/lib.sh"

flags() {
	tmux -L "$SOCK" display -p '#{mouse_standard_flag}#{mouse_sgr_flag}'
}

start 240 40 --demo
wait_for "Gate: Approve the plan"
[ "$(flags)" = "11" ] || fail "mouse modes standard+sgr expected, got $(flags)"
keys Escape
wait_for "gate put aside"
refute "run • scrolled"
# the wheel over the Step log at column 230, row 10, as an SGR report
keys -l "$(printf '\033[<64;230;10M')"
wait_for "run • scrolled"
keys q
wait_for "Quit now\?"
keys y
wait_for "PEVTUI-EXIT=3" 15
# leaving gives the terminal back its plain mouse modes
[ "$(flags)" = "00" ] || fail "mouse modes left on after the program: $(flags)"
tmux -L "$SOCK" kill-server >/dev/null 2>&1

SOCK="$SOCK-off"
start 100 30 --demo --no-mouse
wait_for "Gate: Approve the plan"
[ "$(flags)" = "00" ] || fail "--no-mouse: mouse modes on: $(flags)"
keys q
wait_for "Quit now\?"
keys y
wait_for "PEVTUI-EXIT=3" 15
