#!/bin/sh
# --resume last continues the newest run; a unique start of an id is enough (as git takes
# short ids); an ambiguous start is refused, naming the runs it could be. --replay takes
# the same.
. "$(dirname "$0")/lib.sh"

start 100 30 --demo
wait_for "Gate: Approve the plan"
keys q
wait_for "Quit now\?"
keys y
wait_for "PEVTUI-EXIT=3" 15
tmux -L "$SOCK" kill-server >/dev/null 2>&1

SOCK="$SOCK-2"
start 100 30 --demo
wait_for "Gate: Approve the plan"
keys a
wait_for "Gate: High-complexity step" 60
keys q
wait_for "Quit now\?"
keys y
wait_for "PEVTUI-EXIT=3" 15
tmux -L "$SOCK" kill-server >/dev/null 2>&1
newest=$(grep -l '"gate":"high"' "$TMPD"/runs/*/journal.jsonl | head -n 1)
newest=$(basename "$(dirname "$newest")")
[ -n "$newest" ] || fail "no second run"

# last: the run that reached the high-complexity gate, asked there again
SOCK="$SOCK-last"
start 100 30 --resume last
wait_for "Gate: High-complexity step" 30
grep -q "resuming .*$newest" "$TMPD/stderr" || fail "not the newest run: $(cat "$TMPD/stderr")"
keys q
wait_for "Quit now\?"
keys y
wait_for "PEVTUI-EXIT=3" 15
tmux -L "$SOCK" kill-server >/dev/null 2>&1

# a start that names both runs is refused with both listed; one that names one is taken
for id in $(ls "$TMPD/runs"); do
	other=$id
	[ "$id" != "$newest" ] && break
done
common=""
i=1
while [ "$(printf '%s' "$newest" | cut -c1-$i)" = "$(printf '%s' "$other" | cut -c1-$i)" ]; do
	common=$(printf '%s' "$newest" | cut -c1-$i)
	i=$((i + 1))
done
unique=$(printf '%s' "$newest" | cut -c1-$i)
if "$PEVTUI" --headless --replay "$common" --runs-dir "$TMPD/runs" >"$TMPD/out" 2>"$TMPD/err"
then
	fail "an ambiguous start was taken: $common"
fi
grep -q "is ambiguous: 2 runs start with it" "$TMPD/err" || fail "$(cat "$TMPD/err")"
grep -q "^  $newest\$" "$TMPD/err" || fail "the candidates are not listed: $(cat "$TMPD/err")"
grep -q "^  $other\$" "$TMPD/err" || fail "the candidates are not listed: $(cat "$TMPD/err")"
"$PEVTUI" --headless --replay "$unique" --runs-dir "$TMPD/runs" >"$TMPD/out" 2>"$TMPD/err" ||
	fail "--replay $unique: $(cat "$TMPD/err")"
grep -q "^run $newest " "$TMPD/out" || fail "--replay $unique did not print the newest run"
"$PEVTUI" --headless --replay last --runs-dir "$TMPD/runs" >"$TMPD/out2" 2>"$TMPD/err" ||
	fail "--replay last: $(cat "$TMPD/err")"
cmp -s "$TMPD/out" "$TMPD/out2" || fail "--replay last is not the newest run"
