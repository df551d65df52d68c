#!/bin/sh
# --replay plays a run at a chosen speed and ends on the same screen the replay opens with
# (the run's end state); f / F jump between failures and r / R between replans, landing
# just after the event the journal holds at that line.
. "$(dirname "$0")/lib.sh"

"$PEVTUI" --headless --demo --yes --sim-delay 0 --runs-dir "$TMPD/runs" >/dev/null 2>&1
rundir=$(ls -d "$TMPD"/runs/*/ | head -n 1)
j="$rundir/journal.jsonl"
[ -f "$j" ] || { echo "no journal from the headless run"; exit 1; }
total=$(wc -l <"$j")
steps=$(grep '"type":"plan.adopted"' "$j" | tail -n 1 | grep -o '"step_id":' | wc -l)
[ "$steps" -gt 0 ] || { echo "no adopted plan in the journal"; exit 1; }

start 100 30 --replay "$rundir"
wait_for "replay $total/$total stopped"
expect "finished — passed"
[ "$(screen | grep -c '^│✓ ')" -eq "$steps" ] || fail "not all $steps steps show ✓ at the end"
screen | sed '$d' >"$TMPD/end.txt"
keys 0
wait_for "replay 0/$total stopped"
refute "finished — passed"
keys + +
wait_for "replay 0/$total stopped 50/s"
keys space
wait_for "replay [0-9]+/$total ▶ 50/s"
wait_for "replay $total/$total stopped" 30
expect "end of the run"
screen | sed '$d' >"$TMPD/played.txt"
diff -u "$TMPD/end.txt" "$TMPD/played.txt" >"$TMPD/diff.txt" ||
	fail "the played screen differs from the end state: $(cat "$TMPD/diff.txt")"
# Slower speeds are shown, and a playing replay can be stopped midway.
keys 0 - - - - - - - -
wait_for "replay 0/$total stopped 1/s"
keys space
wait_for "replay [0-9]+/$total ▶ 1/s"
keys space
wait_for "replay [0-9]+/$total stopped 1/s"
keys + + + + + + + + + +
wait_for "replay [0-9]+/$total stopped real time"
keys q
wait_for "PEVTUI-EXIT=0" 10
tmux -L "$SOCK" kill-server >/dev/null 2>&1

# Failures in the flaky-search story: the first tool error, a rejecting verdict, back.
rm -rf "$TMPD/runs"
"$PEVTUI" --headless --demo --scenario flaky-search --yes --sim-delay 0 \
	--runs-dir "$TMPD/runs" >/dev/null 2>&1
rundir=$(ls -d "$TMPD"/runs/*/ | head -n 1)
j="$rundir/journal.jsonl"
total=$(wc -l <"$j")
fails=$(grep -n -E '"type":"tool.result".*"ok":false|"type":"verify.verdict".*"action":"(retry|replan)"|"type":"llm.call".*"status":"error"' "$j" | cut -d: -f1)
f1=$(echo "$fails" | sed -n 1p)
f2=$(echo "$fails" | sed -n 2p)
[ -n "$f1" ] && [ -n "$f2" ] || { echo "the flaky-search journal has fewer than two failures"; exit 1; }
start 100 30 --replay "$rundir"
wait_for "replay $total/$total"
keys 0
wait_for "replay 0/$total"
keys f
wait_for "replay $f1/$total"
keys f
wait_for "replay $f2/$total"
keys F
wait_for "replay $f1/$total"
keys F
wait_for "no earlier failure"
keys r
wait_for "no later replan"
keys q
wait_for "PEVTUI-EXIT=0" 10
tmux -L "$SOCK" kill-server >/dev/null 2>&1

# Replans in the replan story.
rm -rf "$TMPD/runs"
"$PEVTUI" --headless --demo --scenario replan --yes --sim-delay 0 \
	--runs-dir "$TMPD/runs" >/dev/null 2>&1
rundir=$(ls -d "$TMPD"/runs/*/ | head -n 1)
j="$rundir/journal.jsonl"
total=$(wc -l <"$j")
r1=$(grep -n '"type":"plan.proposed".*"reason":"replan"' "$j" | head -n 1 | cut -d: -f1)
[ -n "$r1" ] || { echo "the replan journal has no replan"; exit 1; }
start 100 30 --replay "$rundir"
wait_for "replay $total/$total"
keys 0
wait_for "replay 0/$total"
keys r
wait_for "replay $r1/$total"
keys '$'
wait_for "replay $total/$total"
keys R
wait_for "replay $r1/$total"
keys '?'
wait_for "replay: play / stop"
expect "next / previous failure"
expect "next / previous replan"
keys Escape
wait_gone "replay: play / stop"
expect "replay $r1/$total"
keys q
wait_for "PEVTUI-EXIT=0" 10
