#!/bin/sh
# The requests a role was sent, as kept in the run folder: P for the selected step's
# attempt (the selected log line's attempt in the Step log, the planner's for the run);
# n/N walk through them; with [policy] keep_requests = off none are kept.
. "$(dirname "$0")/lib.sh"

start 120 40 --demo --gate none
wait_for "finished — passed" 60
keys j j
wait_for "Step log .* brightline Review the Brightline"
keys P
wait_for "request 1 of 4 · executor · step brightline · attempt 2"
expect "As sent: [0-9]+ bytes"
expect "^│system"
expect "You are the executor of one step of a plan"
expect "^│tools \([0-9]+\): read_file, write_file"
expect "^│messages \(1\)"
expect "Your step \(attempt 2\)"
keys n
wait_for "request 2 of 4 · executor"
expect "^│messages \(3\)"
keys N N
wait_for "request 4 of 4 · verifier · step brightline · attempt 2"
expect "You are the verifier"
keys Escape
wait_gone "request 4 of 4"
expect_titles
# in the Step log, the attempt of the selected line: the top is attempt 1
keys 2 g P
wait_for "request 1 of 3 · executor · step brightline · attempt 1"
keys Escape
wait_gone "request 1 of 3"
# the run row: the planner's
keys 1 g P
wait_for "request 1 of [0-9]+ · planner · the run"
expect "You are the planner"
keys Escape
wait_gone "planner · the run"
# A re-run keeps more requests: P, opened again, lists them too (the cockpit keeps what it
# listed and reads only what was added to requests.jsonl since).
keys j j
wait_for "Step log .* brightline Review the Brightline"
keys r
wait_for "Run again: brightline"
keys y
j=$(ls "$TMPD"/runs/*/journal.jsonl | head -n 1)
n=0
until [ "$(grep -c '"type":"run.end"' "$j")" -ge 2 ]; do
	n=$((n + 1))
	[ $n -lt 600 ] || fail "the re-run did not end"
	sleep 0.1
done
keys P
wait_for "request 1 of [0-9]+ · executor · step brightline · attempt 3"
keys Escape
wait_gone "attempt 3"
keys q
wait_for "PEVTUI-EXIT=0" 10
rundir=$(ls -d "$TMPD"/runs/*/ | head -n 1)
[ "$(wc -l <"$rundir/requests.jsonl")" -gt 10 ] || fail "the requests were not kept"

# Turned off: nothing kept, and P says why.
tmux -L "$SOCK" kill-server >/dev/null 2>&1
rm -rf "$TMPD/runs"
printf '[policy]\nkeep_requests = off\n' >"$TMPD/config"
start 120 40 --demo --gate none --config "$TMPD/config"
wait_for "finished — passed" 60
keys j j
wait_for "Step log .* brightline Review the Brightline"
keys P
wait_for "no request was kept for attempt 2 of step brightline"
keys q
wait_for "PEVTUI-EXIT=0" 10
rundir=$(ls -d "$TMPD"/runs/*/ | head -n 1)
[ ! -e "$rundir/requests.jsonl" ] && [ ! -e "$rundir/requests" ] ||
	fail "requests were kept with keep_requests = off"
