#!/bin/sh
# --scenario shell reaches the shell gate, whose dialog shows the command, where it runs,
# its time limit and why the allow list did not let it through. A approves it and allows
# that exact command for the rest of the run: the same test, run again after the fix,
# runs without a gate. The step log shows the command as it ran, its exit status and its
# output as lines; the journal and report.md have them as fields.
. "$(dirname "$0")/lib.sh"

start 120 40 --demo --scenario shell
wait_for "Gate: Approve the plan"
keys a
wait_for "Gate: Run a shell command"
expect "sh test.sh"
expect "Runs in: /.*/workspace"
expect "Time limit: 60 s"
expect "Allow list: no — the allow list is empty"
expect "A allow for run"
keys A
wait_for "runs without asking" 10
wait_for "finished — passed" 60
j=$(ls "$TMPD"/runs/*/journal.jsonl | head -n 1)
[ "$(grep -c '"type":"gate.open".*"gate":"shell"' "$j")" = 1 ] ||
	fail "the second run of the same command asked again"
grep -q '"type":"gate.decision".*"decision":"approve".*"remember":true,"command":"sh test.sh"' "$j" ||
	fail "no remembered approval journaled"
grep -q '"type":"tool.result".*"command":"sh test.sh","approval":"allowed_for_run","ran":true,"exit_status":0,"duration_ms":' "$j" ||
	fail "the second run's tool.result lacks its fields"
grep -q '"type":"tool.result".*"command":"sh test.sh","approval":"operator","ran":true,"exit_status":1,' "$j" ||
	fail "the first run's tool.result lacks its fields"
# The last step's log: the command, its exit and time, then its output line by line.
keys 1 j j j
wait_for "─ run_test_again Run the test again ─┐"
wait_for "← run_shell \\$ sh test.sh — exit 0 after [0-9.]+ m?s \\(allowed for this run\\)"
expect "│    total.sh says: 1234.50 +│"
expect "│    the invoice says: 1234.50 +│"
expect "│    PASS +│"
r=$(ls "$TMPD"/runs/*/report.md | head -n 1)
grep -q 'shell ` sh test.sh ` — exit status 1 after' "$r" || fail "report.md lacks the first run"
grep -q 'shell ` sh test.sh ` — exit status 0 after .* (allowed for this run)' "$r" ||
	fail "report.md lacks the second run"
grep -q 'allowed for the rest of the run: ` sh test.sh `' "$r" ||
	fail "report.md lacks the remembered approval"
keys q
wait_for "PEVTUI-EXIT=0" 10
