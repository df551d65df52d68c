#!/bin/sh
# Real MCP servers no one here wrote, from npm: @modelcontextprotocol/server-filesystem
# and server-everything (installed by ./quickstart test into BUILD/npm-mcp). --list-tools
# shows their tools; a headless run calls them through the mcp gate (--yes): text, a
# number, an image saved into the workspace, and their environment, which holds no key.
# SKIP (77) with the reason when they are not installed.
: "${top_builddir:=.}"
PEVTUI=${PEVTUI:-$top_builddir/pevtui}
case $PEVTUI in /*) ;; *) PEVTUI="$(pwd)/$PEVTUI" ;; esac
bin=${MCP_NPM_DIR:-$top_builddir/npm-mcp}/node_modules/.bin
case $bin in /*) ;; *) bin="$(pwd)/$bin" ;; esac
if ! command -v node >/dev/null 2>&1; then
	echo "SKIP: node is not installed (apt-get install nodejs npm)"
	exit 77
fi
if [ ! -x "$bin/mcp-server-filesystem" ] || [ ! -x "$bin/mcp-server-everything" ]; then
	echo "SKIP: the npm servers are not in $bin (./quickstart test installs them with npm)"
	exit 77
fi

TMPD=$(mktemp -d /tmp/pevtui-mcp-real.XXXXXX) || exit 99
trap '[ -n "${KEEP:-}" ] || rm -rf "$TMPD"' EXIT
fail() {
	echo "FAIL: $*"
	exit 1
}
mkdir -p "$TMPD/ws"
echo "a note for the real server" >"$TMPD/ws/note.txt"
cat >"$TMPD/config" <<EOF2
[mcp.fs]
command = $bin/mcp-server-filesystem
args = ["$TMPD/ws"]
allow = ["read_*", "list_*"]
[mcp.ev]
command = $bin/mcp-server-everything
EOF2

"$PEVTUI" --config "$TMPD/config" --list-tools >"$TMPD/tools" 2>"$TMPD/err" ||
	fail "--list-tools failed: $(cat "$TMPD/err")"
grep -Eq '^fs__read_text_file +fs +none \(allow: read_\*\)' "$TMPD/tools" ||
	fail "no fs__read_text_file allowed by read_*: $(cat "$TMPD/tools")"
grep -Eq '^ev__get-tiny-image +ev +mcp ' "$TMPD/tools" || fail "no ev__get-tiny-image behind the gate"

cat >"$TMPD/script.json" <<EOF2
{
 "task": "Use real servers",
 "planner": [{"goal": "{{task}}", "steps": [{"step_id": "use", "name": "Use",
   "description": "Call them.", "acceptance_criteria": ["called"], "dependencies": [],
   "estimated_complexity": "low"}]}],
 "executor": {"use": [{"rounds": [
   {"text": "Reading.", "tool_calls": [{"name": "fs__read_text_file",
     "input": {"path": "$TMPD/ws/note.txt"}}]},
   {"text": "Adding.", "tool_calls": [{"name": "ev__get-sum", "input": {"a": 2, "b": 40}}]},
   {"text": "Image.", "tool_calls": [{"name": "ev__get-tiny-image", "input": {}}]},
   {"text": "Env.", "tool_calls": [{"name": "ev__get-env", "input": {}}]}],
   "final": {"reasoning": "called", "actions_taken": ["mcp"],
     "step_output": {"findings": "{{tool_result}}", "artifacts": [],
       "meets_criteria": true}, "confidence": 0.9}}]}
}
EOF2
ANTHROPIC_API_KEY=sk-ant-must-not-leak "$PEVTUI" --config "$TMPD/config" --headless --yes \
	--provider sim --script "$TMPD/script.json" --sim-delay 0 --runs-dir "$TMPD/runs" \
	>"$TMPD/out" 2>"$TMPD/err" || fail "the run failed: $(cat "$TMPD/err")"
j=$(ls "$TMPD"/runs/*/journal.jsonl)
grep -q '"type":"tool.result".*"tool":"fs__read_text_file".*"summary":"a note for the real server' "$j" ||
	fail "fs__read_text_file did not read the note"
grep -q '"type":"tool.result".*"tool":"fs__read_text_file".*"approval":"allow_list"' "$j" ||
	fail "the allow list did not let fs__read_text_file through"
grep -q '"type":"tool.result".*"tool":"ev__get-sum".*"ok":true.*42' "$j" || fail "no sum of 42"
grep -q '"type":"tool.result".*"tool":"ev__get-tiny-image".*saved as mcp-files/ev-get-tiny-image-1.png' "$j" ||
	fail "the image was not saved"
ls "$TMPD"/runs/*/workspace/mcp-files/ev-get-tiny-image-1.png >/dev/null 2>&1 ||
	fail "no image file in the workspace"
grep -q '"type":"tool.result".*"tool":"ev__get-env".*"ok":true' "$j" || fail "get-env failed"
if grep -rq "sk-ant-must-not-leak" "$TMPD/runs"; then
	fail "pevtui's API key reached a server"
fi
grep -q '"gate":"mcp"' "$j" || fail "no mcp gate opened"
echo "PASS: real MCP servers"
