#!/bin/sh
# Every shipped theme draws the cockpit: with colour on 256- and 8-colour terminals, and
# without any colour for mono and NO_COLOR. An unknown theme falls back with a sentence.
. "$(dirname "$0")/lib.sh"

: "${top_srcdir:=$(dirname "$0")/../..}"
colour_screen() {
	tmux -L "$SOCK" capture-pane -p -e
}

n_theme=0
run_theme() { # THEME TERM NO_COLOR → leaves the session at the plan gate
	tmux -L "$SOCK" kill-server >/dev/null 2>&1
	# A new server name each time: a server that is still shutting down must not swallow
	# the next session.
	n_theme=$((n_theme + 1))
	SOCK="pevtui-test-$$-$n_theme"
	TEST_ENV="NO_COLOR=$3 TERM=$2 PEVTUI_THEMES=$top_srcdir/themes"
	start 100 30 --demo --theme "$1"
	wait_for "Gate: Approve the plan"
	expect "─ Plan "
	expect "─ Step log "
}

for theme in default light high-contrast; do
	run_theme "$theme" screen-256color ""
	colour_screen | grep -q '38;5;\|[[;]3[0-7]m\|[[;]9[0-7]m' || fail "$theme: no colour output"
	run_theme "$theme" screen ""
	colour_screen | grep -q '\[3[0-7]m\|;3[0-7]m' || fail "$theme: no 8-colour output"
	colour_screen | grep -q '38;5;' && fail "$theme: 256 colours sent to an 8-colour terminal"
done
run_theme mono screen-256color ""
colour_screen | grep -q '38;5;\|\[3[0-7]m' && fail "mono: colour output"
colour_screen | grep -q '\[7m\|;7m' || fail "mono: no reverse video for the status line"
run_theme default screen-256color 1
colour_screen | grep -q '38;5;\|\[3[0-7]m' && fail "NO_COLOR: colour output"
run_theme no-such-theme screen-256color 1
expect 'theme "no-such-theme" not found'
keys q
wait_for "Quit now"
keys y
wait_for "PEVTUI-EXIT=3" 10
