# tests/sandbox/lib.sh — sourced by the sandbox tests: a fake home with secrets, a
# workspace, a folder outside it, and sb_run, which has the simulated model run one
# command with run_shell through the real binary.
#
# PEVTUI_SANDBOX_LAYERS (a test hook of the probe, agent/confine/probe.c) plays a machine
# without some layers: "landlock,seccomp" (no bubblewrap), "none".
: "${PEVTUI:=./pevtui}"
: "${top_builddir:=.}"
PROBE=$top_builddir/tests/sandbox/escape_probe
# Not beneath /tmp: bubblewrap gives commands an empty /tmp of their own, where the
# folder outside would not even be seen.
T=$(mktemp -d "$top_builddir/sandbox-test.XXXXXX") || exit 99
T=$(cd "$T" && pwd -P)
bg_pids=""
cleanup() {
	for p in $bg_pids; do kill "$p" 2>/dev/null; done
	rm -rf "$T"
}
trap cleanup EXIT
export HOME="$T/home" XDG_CONFIG_HOME="$T/home/.config" XDG_DATA_HOME="$T/home/.local/share"
unset TMPDIR
WS=$T/ws
OUT=$T/outside
mkdir -p "$WS" "$OUT" "$HOME/.ssh" "$HOME/.gnupg" "$HOME/.aws" "$HOME/.config/gcloud" \
	"$HOME/.docker" "$XDG_CONFIG_HOME/pevtui" "$XDG_DATA_HOME/pevtui"
for f in .ssh/id_ed25519 .gnupg/secring .aws/credentials .config/gcloud/token .netrc \
	.docker/config.json .local/share/pevtui/data; do
	echo "SECRET-MARK $f" >"$HOME/$f"
done
printf '# SECRET-MARK config\n' >"$XDG_CONFIG_HOME/pevtui/config"
echo "victim" >"$OUT/victim"
n=0

fail() {
	echo "FAIL: $*"
	[ -f "$T/result" ] && { echo "--- what the model got:"; cat "$T/result"; }
	[ -f "$T/out" ] && { echo "--- pevtui said:"; tail -20 "$T/out"; }
	exit 1
}
skip() {
	echo "SKIP: $*"
	exit 77
}

# A shell string as a JSON string's contents.
json_text() {
	printf '%s' "$1" | sed -e 's/\\/\\\\/g' -e 's/"/\\"/g' -e 's/	/\\t/g' |
		awk 'BEGIN { ORS = "" } NR > 1 { print "\\n" } { print }'
}

# sb_script CMD [EXTRA_INPUT]: a one-step plan whose executor runs CMD with run_shell.
sb_script() {
	n=$((n + 1))
	cat >"$T/script.$n.json" <<EOS
{"task": "Run a command",
 "planner": [{"goal": "{{task}}", "steps": [{"step_id": "run", "name": "Run",
   "description": "Run it.", "acceptance_criteria": ["done"], "dependencies": [],
   "estimated_complexity": "low"}]}],
 "executor": {"run": [{"rounds": [{"text": "Running.", "tool_calls":
   [{"name": "run_shell", "input": {"command": "$(json_text "$1")"${2:+, $2}}}]}],
   "final": {"reasoning": "ran", "actions_taken": ["run_shell"],
     "step_output": {"findings": "{{tool_result}}", "artifacts": [],
       "meets_criteria": true}, "confidence": 0.9}}]}}
EOS
}

# sb_run CMD [PEVTUI_ARGS...]: runs CMD confined; what the model got in $T/result,
# pevtui's output in $T/out, the run's folder in $RUN, its journal in $JOURNAL.
sb_run() {
	sb_script "$1"
	shift
	sb_go "$@"
}

# sb_go [PEVTUI_ARGS...]: runs the last sb_script (headless, --yes unless --no-yes).
sb_go() {
	yes=--yes
	if [ "${1:-}" = --no-yes ]; then
		yes=""
		shift
	fi
	rm -f "$T/result"
	# shellcheck disable=SC2086
	"$PEVTUI" --headless $yes --provider sim --script "$T/script.$n.json" --sim-delay 0 \
		--runs-dir "$T/runs.$n" --workspace "$WS" "$@" >"$T/out" 2>&1
	sb_status=$?
	RUN=$(ls -d "$T/runs.$n"/*/ 2>/dev/null | head -1)
	JOURNAL=${RUN}journal.jsonl
	# what the tool told the model: the scripted model reports it as its findings
	"$PROBE" findings "$JOURNAL" >"$T/result" 2>/dev/null || : >"$T/result"
}

# The layers line of a run (after sb_run).
sb_line() {
	grep -o '"line":"sandbox:[^"]*"' "$JOURNAL" | head -1 | sed 's/^"line":"//; s/"$//'
}

# Starts `escape_probe serve KIND WHERE COUNT` in the background; waits until it listens.
sb_serve() {
	"$PROBE" serve "$1" "$2" "$3" &
	bg_pids="$bg_pids $!"
	i=0
	until [ -s "$3" ]; do
		i=$((i + 1))
		[ $i -gt 500 ] && fail "the $1 server did not start"
		sleep 0.01
	done
}

