#!/bin/sh
# Leaving the sandbox is a decision: run_shell with "outside_sandbox": true and a reason
# always opens the shell gate (allow list notwithstanding), --yes never approves it, and
# without a reason nothing is asked at all.
. "${top_srcdir:-.}/tests/sandbox/lib.sh"
printf '[tools]\nshell_allow = touch\n' >"$XDG_CONFIG_HOME/pevtui/config"

# Allow-listed, with --yes: the gate opens, says outside, and policy refuses it.
sb_script "touch $OUT/escaped" '"outside_sandbox": true, "reason": "needs to write the outside folder"'
sb_go
[ -e "$OUT/escaped" ] && fail "a command outside the sandbox ran under --yes"
grep '"type":"gate.open"' "$JOURNAL" | grep -q '"outside_sandbox":true' ||
	fail "no shell gate said outside the sandbox"
grep '"type":"gate.open"' "$JOURNAL" | grep -q '"reason":"needs to write the outside folder"' ||
	fail "the gate does not carry the reason"
grep '"type":"gate.decision"' "$JOURNAL" | grep -q 'never approves' ||
	fail "the refusal does not say --yes never approves it"
grep -q "refused" "$T/result" || fail "the model was not told it was refused"

# With the shell gate off it is refused too (no one to ask).
sb_script "touch $OUT/escaped" '"outside_sandbox": true, "reason": "again"'
sb_go --gate plan
[ -e "$OUT/escaped" ] && fail "a command outside the sandbox ran with the shell gate off"

# Without a reason: refused before any gate.
sb_script "touch $OUT/escaped" '"outside_sandbox": true'
sb_go
[ -e "$OUT/escaped" ] && fail "a command outside the sandbox ran without a reason"
grep -q 'needs \\"reason\\"\|needs "reason"' "$T/result" || fail "the model was not told a reason is needed"
grep '"type":"gate.open"' "$JOURNAL" | grep -q '"gate":"shell"' && fail "a gate opened without a reason"
exit 0
