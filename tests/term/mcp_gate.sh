#!/bin/sh
# The mcp gate, with the server from the project's .mcp.json: it names the server, the
# tool and its arguments, shows what the server claims of the tool (readOnlyHint) as a
# claim; s refuses the call and the step goes on; A approves the next and allows that tool
# for the rest of the run (its second call does not ask); the hostile result reaches the
# step log cleaned of escape sequences. The server itself starts only once approved.
. "$(dirname "$0")/lib.sh"

server="$top_builddir/tests/mcp/mcp_test_server"
case $server in /*) ;; *) server="$(pwd)/$server" ;; esac
[ -x "$server" ] || { echo "no test server at $server"; exit 99; }
printf '{"mcpServers": {"t": {"command": "%s"}}}\n' "$server" >"$TMPD/.mcp.json"

cat >"$TMPD/script.json" <<'JSON'
{
 "task": "Use the test server",
 "planner": [{"goal": "{{task}}", "steps": [{"step_id": "use", "name": "Use the server",
   "description": "Call its tools.", "acceptance_criteria": ["called"],
   "dependencies": [], "estimated_complexity": "low"}]}],
 "executor": {"use": [{"rounds": [
   {"text": "Crashing it.", "tool_calls": [{"name": "t__crash", "input": {"why": "a test"}}]},
   {"text": "Being hostile.", "tool_calls": [{"name": "t__hostile", "input": {}}]},
   {"text": "Again.", "tool_calls": [{"name": "t__hostile", "input": {"again": true}}]}],
   "final": {"reasoning": "called", "actions_taken": ["t__hostile"],
     "step_output": {"findings": "{{tool_result}}", "artifacts": [],
       "meets_criteria": true}, "confidence": 0.9}}]}
}
JSON

# A server from a .mcp.json starts only once approved: asked on the terminal before the
# cockpit opens, remembered in XDG_DATA_HOME (the test's own).
TEST_ENV="XDG_DATA_HOME=$TMPD/data"
start 110 60 --provider sim --script "$TMPD/script.json" --gate mcp --max-retries 0 \
	--max-replans 0
wait_for "names an MCP server not approved before" 30
# The server's path, however long the build path makes it: lines joined (a long one
# wraps), so the test does not depend on where the tree lives (make distcheck).
screen | tr -d '\n' | grep -E -q "t: /.*mcp_test_server" || fail "the prompt does not name the server's path"
keys y Enter
wait_for "Gate: Call an MCP tool" 30
grep -q '"name":"t"' "$TMPD/data/pevtui/trusted-mcp.jsonl" || fail "the approval was not remembered"
expect "Server t, tool crash"
expect '"why": "a test"'
expect "The server says: read-only \\(readOnlyHint; not checked\\)"
expect "s refuse"
expect "A allow tool for run"
keys s
wait_for "Server t, tool hostile" 30
keys A
wait_for "finished — " 60
# The step's log: its calls, named with their server, and the cleaned result.
keys j
wait_for "evil after" 10
expect "→ t__crash \\(MCP server t\\)"
refute "pwned"
keys q
wait_for "PEVTUI-EXIT=[02]" 10
j=$(ls "$TMPD"/runs/*/journal.jsonl | head -n 1)
grep -q '"gate":"mcp".*"decision":"skip"' "$j" || fail "no refusal journaled"
grep -q '"type":"tool.result".*"tool":"t__crash".*"approval":"refused"' "$j" ||
	fail "the refused call is not in the journal"
grep -q '"type":"tool.result".*"tool":"t__hostile".*"approval":"operator"' "$j" ||
	fail "the approved call is not in the journal"
grep -q '"gate":"mcp".*"decision":"approve".*"remember":true,"tool":"t__hostile"' "$j" ||
	fail "the allow for the run is not in the journal"
grep -q '"type":"tool.result".*"tool":"t__hostile".*"approval":"allowed_for_run"' "$j" ||
	fail "the second call asked again"
[ "$(grep -c '"type":"gate.open".*"gate":"mcp"' "$j")" = 2 ] || fail "not two mcp gates"
