#!/bin/sh
# Resizing live: 100x30 → 60x20 (one pane and tabs) → 20x10 → 100x30, never garbage.
. "$(dirname "$0")/lib.sh"

start 100 30 --demo
wait_for "Gate: Approve the plan"
expect "─ Plan "
expect "─ Step log "

tmux -L "$SOCK" resize-window -t 0 -x 60 -y 20
wait_for " 1 Plan .* 2 Step log "
[ "$(screen_width)" -le 60 ] || fail "a line is wider than 60 columns"
expect "Gate: "
# focus moves between the one-pane views
keys Escape
wait_for "waiting \(Enter\)"
keys Tab
wait_for "─ Step log "

tmux -L "$SOCK" resize-window -t 0 -x 20 -y 10
wait_width_le 20
refute "PEVTUI-EXIT"

tmux -L "$SOCK" resize-window -t 0 -x 100 -y 30
wait_for "─ Verdicts "
wait_gone " 1 Plan .* 2 Step log "
expect_titles
keys Enter
wait_for "Gate: Approve the plan"
keys a
wait_for "Gate: High-complexity step" 60
keys x
wait_for "Reject this gate\?"
keys y
wait_for "finished — aborted" 30
keys q
wait_for "PEVTUI-EXIT=3" 10
