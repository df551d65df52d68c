#!/bin/sh
# The drill-down's p opens the requests a role was sent for the entry's attempt, and o
# hands one whole to $PAGER: from a run's requests.jsonl, and from a run kept by an older
# pevtui (one file per request in requests/, tool outputs in attempts/STEP/N/tools/K.txt
# rather than attempts.pack: a fixture made here from the first run).
. "$(dirname "$0")/lib.sh"

# wait_paged PATTERN — polls the pager's copy until grep -E finds PATTERN in it.
wait_paged() {
	n=0
	until grep -E -q -- "$1" "$TMPD/paged" 2>/dev/null; do
		n=$((n + 1))
		[ $n -lt 300 ] || fail "the pager never got: $1"
		sleep 0.1
	done
}

# open_request — from the top of brightline's log: its first write_file call, then p.
open_request() {
	keys j j
	wait_for "Step log .* brightline Review the Brightline"
	keys 2 g
	keys / write_file Enter
	keys Enter
	wait_for "tool call · step brightline · attempt 1"
	keys p
	wait_for "request 1 of 3 · executor · step brightline · attempt 1"
}

TEST_ENV="PAGER='cat >$TMPD/paged'"
start 120 40 --demo --gate none
wait_for "finished — passed" 60
open_request
expect "As sent: [0-9]+ bytes"
expect "/requests\.jsonl#[0-9]+ \(o shows"
expect "You are the executor of one step of a plan"
keys n
wait_for "request 2 of 3 · executor"
keys o
wait_paged '"pevtui_note":[[:space:]]+"nothing went over the wire'
grep -E -q '"model":[[:space:]]+"sim-executor"' "$TMPD/paged" || fail "the pager's copy is not the request"
expect "request 2 of 3 · executor"
keys Escape
wait_gone "request 2 of 3"
wait_for "tool call · step brightline · attempt 1"
keys Escape
wait_gone "tool call · step brightline"
keys q
wait_for "PEVTUI-EXIT=0" 10
rundir=$(ls -d "$TMPD"/runs/*/ | head -n 1)
[ ! -e "$rundir/requests" ] || fail "a requests/ folder was made"
[ "$(wc -l <"$rundir/requests.jsonl")" -gt 10 ] || fail "the requests were not kept"

# The same run as an older pevtui kept it: one file per request, marked, no
# requests.jsonl; each tool output as tools/K.txt, marked, and named so by the journal.
# Replayed, it lists and opens the same way.
mkdir "$rundir/requests"
jq -r '[.seq, .role, (.step_id // "~"), .attempt] | @tsv' "$rundir/requests.jsonl" |
	while IFS="$(printf '\t')" read -r seq role step attempt; do
		name=$(printf '%06d-%s-%s-%d.json' "$seq" "$role" "$step" "$attempt")
		jq -c "select(.seq == $seq) | .body | .system = \"OLD LAYOUT \" + .system" \
			"$rundir/requests.jsonl" >"$rundir/requests/$name"
	done
rm "$rundir/requests.jsonl" "$TMPD/paged"
jq -r 'select(.type == "tool.result" and .output_file) | [.output_file, .summary] | @tsv' \
	"$rundir/journal.jsonl" |
	while IFS="$(printf '\t')" read -r f summary; do
		k=$(basename "$f" .txt)
		mkdir -p "$rundir/$(dirname "$f")/tools"
		printf 'OLD OUTPUT %s\n' "$summary" >"$rundir/$(dirname "$f")/tools/${k#tool-}.txt"
	done
[ -d "$rundir/attempts" ] || fail "the journal named no tool output"
rm "$rundir/attempts.pack"
sed -i 's#\("output_file":"attempts/[^"]*\)/tool-\([0-9]*\)\.txt"#\1/tools/\2.txt"#g' \
	"$rundir/journal.jsonl"
tmux -L "$SOCK" kill-server >/dev/null 2>&1
start 120 40 --replay "$rundir"
wait_for "finished — passed"
open_request
expect "/requests/[0-9]{6}-executor-brightline-1\.json \(o shows"
expect "OLD LAYOUT You are the executor"
keys o
wait_paged '"system":[[:space:]]+"OLD LAYOUT You are the executor'
keys Escape
wait_gone "request 1 of 3"
wait_for "tool call · step brightline · attempt 1"
expect "Kept in the run folder: attempts/brightline/1/tools/[0-9]+\.txt"
expect "OLD OUTPUT"
keys Escape
wait_gone "tool call · step brightline"
keys q
wait_for "PEVTUI-EXIT=0" 10
