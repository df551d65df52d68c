#!/bin/sh
# / in the log: the status line counts the matches ("match 1/N"), n and N walk them and
# wrap, and only the matched text is marked, not its whole line.
. "$(dirname "$0")/lib.sh"

start 100 30 --demo --gate none
wait_for "finished — passed" 60
keys / contract Enter
wait_for "match 1/[0-9]+: contract"
total=$(screen | grep -o "match 1/[0-9]*" | cut -d/ -f2)
[ "$total" -ge 3 ] || fail "expected several matches, counted $total"
# only the match is in reverse video (the search role without colour)
tmux -L "$SOCK" capture-pane -p -e | grep -q "$(printf '\033\\[7mcontract\033\\[0m')" ||
	fail "the match is not marked on its own"
keys n
wait_for "match 2/$total: contract"
keys N
wait_for "match 1/$total: contract"
keys N
wait_for "match $total/$total: contract"
keys / zzznothing Enter
wait_for "not found: zzznothing"
keys q
wait_for "PEVTUI-EXIT=0" 10
