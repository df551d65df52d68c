#!/bin/sh
# pevtui --board lists the runs with the live one waiting at its plan gate first; the
# filter hides what does not match; Enter attaches to the run, and leaving the run brings
# the board back, now showing the gate the run waits at next; a gate opening in another
# run is signalled through notify_cmd. With no task and a run live, pevtui opens on the
# board.
. "$(dirname "$0")/lib.sh"
. "$(dirname "$0")/attach_lib.sh"

"$PEVTUI" --headless --demo --yes --sim-delay 0 --runs-dir "$TMPD/runs" >/dev/null 2>&1 ||
	fail "the finished run did not pass"
"$PEVTUI" --detach --demo --sim-delay 0 --runs-dir "$TMPD/runs" 2>"$TMPD/detach.err" ||
	fail "--detach failed: $(cat "$TMPD/detach.err")"

# A gate opening in any run is signalled as the notification settings say ([ui] notify_cmd).
printf '[ui]\nnotify_cmd = echo "$PEVTUI_RUN_ID $PEVTUI_GATE" > "%s/n.$$" && mv "%s/n.$$" "%s/notified.$PEVTUI_GATE"\n' \
	"$TMPD" "$TMPD" "$TMPD" >"$TMPD/config"
start 140 20 --board --config "$TMPD/config"
wait_for "2 runs · 1 gate waiting · sort: state · checkpoints " 15
wait_for "waiting +plan " 15
expect "passed "
# Live and waiting first.
screen | grep -A1 "^RUN" | tail -n 1 | grep -q "waiting" || fail "the waiting run is not first"

keys / w a i t Enter
wait_for "filter: wait" 10
wait_gone "passed " 10
keys / Escape
wait_for "passed " 10

keys g Enter
wait_for "Gate: Approve the plan" 30
keys a
wait_for "Gate: High-complexity step" 60
keys q
wait_for "waiting +high memo" 15
# A new run opens its plan gate while the board is shown: notify_cmd names it.
rm -f "$TMPD/notified.plan"
ls "$TMPD/runs" >"$TMPD/runs.before"
"$PEVTUI" --detach --demo --sim-delay 0 --runs-dir "$TMPD/runs" 2>"$TMPD/detach2.err" ||
	fail "the second --detach failed: $(cat "$TMPD/detach2.err")"
wait_for "3 runs" 15
n=0
until [ -f "$TMPD/notified.plan" ]; do
	[ $n -lt 150 ] || fail "the board did not signal the new run's plan gate"
	sleep 0.1
	n=$((n + 1))
done
id=$(ls "$TMPD/runs" | grep -v -x -F -f "$TMPD/runs.before")
grep -q "^$id plan\$" "$TMPD/notified.plan" || fail "notify_cmd got: $(cat "$TMPD/notified.plan")"
keys q
wait_for "PEVTUI-EXIT=0" 10

# pevtui with no task while a run is live opens the board; n starts a new run instead.
tmux -L "$SOCK" kill-server >/dev/null 2>&1
SOCK="$SOCK-2"
start 140 20 --provider sim
wait_for "n new run" 15
expect "waiting +high memo"
keys n
wait_for "Gate: Approve the plan" 30
keys q
wait_for "Quit now\?" 10
keys y
wait_for "PEVTUI-EXIT=3" 15
