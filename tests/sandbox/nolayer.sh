#!/bin/sh
# No layer holds (the probe's test hook plays such a machine): every command goes to the
# shell gate, allow list or not, and the gate says why; --sandbox off is said, and
# commands run as before.
. "${top_srcdir:-.}/tests/sandbox/lib.sh"
PEVTUI_SANDBOX_LAYERS=none
export PEVTUI_SANDBOX_LAYERS
printf '[tools]\nshell_allow = echo\n' >"$XDG_CONFIG_HOME/pevtui/config"

# Without --yes and with only the shell gate: the allow-listed command still asks, and
# with no operator the gate refuses it.
sb_script "echo allowed-ran"
sb_go --no-yes --gate shell
grep -q '"type":"gate.open"' "$JOURNAL" || fail "no shell gate opened for an allow-listed command"
grep '"type":"gate.open"' "$JOURNAL" | grep -q 'no sandbox layer' ||
	fail "the gate does not say that no layer holds"
grep -q "^allowed-ran" "$T/result" && fail "the command ran without an operator"
grep -q 'no layer confines files here' "$JOURNAL" || fail "run.start does not say no layer holds"

# --sandbox off: allow-listed commands run without the gate, and the line says off.
sb_script "echo allowed-ran"
sb_go --no-yes --gate shell --sandbox off
grep -q '"type":"gate.open"' "$JOURNAL" && fail "a gate opened for an allow-listed command with the sandbox off"
grep -q "^allowed-ran" "$T/result" || fail "the allow-listed command did not run"
grep -q '"line":"sandbox: off' "$JOURNAL" || fail "run.start does not say the sandbox is off"
grep -q 'sandbox: off' "${RUN}report.md" || fail "report.md does not say the sandbox is off"
exit 0
