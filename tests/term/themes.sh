#!/bin/sh
# Every shipped theme draws the cockpit: with colour on 256- and 8-colour terminals, and
# without any colour for mono and NO_COLOR. Uninstalled, the themes come from the source
# tree; a theme that cannot be found stops pevtui, naming where it looked.
. "$(dirname "$0")/lib.sh"

: "${top_srcdir:=$(dirname "$0")/../..}"
colour_screen() {
	tmux -L "$SOCK" capture-pane -p -e
}

n_theme=0
run_theme() { # THEME TERM NO_COLOR → leaves the session at the plan gate
	tmux -L "$SOCK" kill-server >/dev/null 2>&1
	stop_engines # the cockpit detached when its terminal went away
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

# Uninstalled, the binary finds the themes of its source tree without PEVTUI_THEMES.
tmux -L "$SOCK" kill-server >/dev/null 2>&1
stop_engines
SOCK="pevtui-test-$$-build"
TEST_ENV="TERM=screen-256color PEVTUI_THEMES="
start 100 30 --demo --theme high-contrast
wait_for "Gate: Approve the plan"
if [ -s "$TMPD/stderr" ]; then
	fail "stderr: $(cat "$TMPD/stderr")"
fi

# A theme that is nowhere stops pevtui before the screen, naming where it looked and what
# is there.
tmux -L "$SOCK" kill-server >/dev/null 2>&1
stop_engines
SOCK="pevtui-test-$$-missing"
rm -rf "$TMPD/runs"
TEST_ENV="PEVTUI_THEMES=$top_srcdir/themes"
start 100 30 --demo --theme no-such-theme
wait_for "PEVTUI-EXIT=1" 10
grep -q 'theme "no-such-theme" not found: looked for no-such-theme.theme in' "$TMPD/stderr" ||
	fail "no sentence saying the theme was not found"
themes_dir=$(cd "$top_srcdir/themes" && pwd -P)
grep -q "in $themes_dir, " "$TMPD/stderr" || fail "the folders looked in are not named"
grep -q "themes there: default, high-contrast, light, mono" "$TMPD/stderr" ||
	fail "the themes that are there are not named"
if [ -n "$(ls -A "$TMPD/runs" 2>/dev/null)" ]; then
	fail "a run folder was left behind"
fi
