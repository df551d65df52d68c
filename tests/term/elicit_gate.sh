#!/bin/sh
# The elicit gate: an MCP server asks a question during a call (elicitation/create); the
# cockpit shows it holding only that step — the server, its message, the form with the
# schema's defaults — a opens the form filled with them (SEP-1034), a field is changed and
# F2 sends the typed answer; s declines the next question, x cancels the third, and the
# run goes on each time. The answers' content never reaches the journal.
. "$(dirname "$0")/lib.sh"

server="$top_builddir/tests/mcp/mcp_test_server"
case $server in /*) ;; *) server="$(pwd)/$server" ;; esac
[ -x "$server" ] || { echo "no test server at $server"; exit 99; }
printf '{"mcpServers": {"t": {"command": "%s"}}}\n' "$server" >"$TMPD/.mcp.json"

cat >"$TMPD/script.json" <<'JSON'
{
 "task": "Ask the operator",
 "planner": [{"goal": "{{task}}", "steps": [{"step_id": "ask", "name": "Ask",
   "description": "Call a tool that asks.", "acceptance_criteria": ["asked"],
   "dependencies": [], "estimated_complexity": "low"}]}],
 "executor": {"ask": [{"rounds": [
   {"text": "Asking.", "tool_calls": [{"name": "t__echo", "input": {"ask": {"type": "object",
     "properties": {"colour": {"type": "string", "title": "Colour", "enum": ["red", "blue"],
     "default": "red"}, "count": {"type": "integer", "default": 3}}, "required": ["colour"]}}}]},
   {"text": "Again.", "tool_calls": [{"name": "t__echo", "input": {"ask": {"type": "object",
     "properties": {"x": {"type": "string"}}}}}]},
   {"text": "Once more.", "tool_calls": [{"name": "t__echo", "input": {"ask": {"type": "object",
     "properties": {"x": {"type": "string"}}}}}]}],
   "final": {"reasoning": "asked", "actions_taken": ["t__echo"],
     "step_output": {"findings": "{{tool_result}}", "artifacts": [],
       "meets_criteria": true}, "confidence": 0.9}}]}
}
JSON

TEST_ENV="XDG_DATA_HOME=$TMPD/data"
start 110 60 --provider sim --script "$TMPD/script.json" --gate elicit --max-retries 0 \
	--max-replans 0
wait_for "names an MCP server not approved before" 30
keys y Enter
wait_for "Gate: An MCP server asks" 30
expect "MCP server t asks:"
expect "Which colour\\?"
expect "Colour \\(text, required\\) \\[red\\|blue\\]: red"
expect "count \\(a whole number\\): 3"
expect "a answer \\(a form\\)"
keys a
wait_for "Answer the MCP server" 10
# The second field: its default replaced.
keys Tab C-u 7
keys F2
wait_for "the answer went to the MCP server" 10
wait_for "Gate: An MCP server asks" 30
keys s
wait_for "question was declined" 10
wait_for "Gate: An MCP server asks" 30
keys x
wait_for "finished — " 60
keys j
wait_for 'accept \{"colour":"red","count":7\}' 10
expect "decline"
expect "cancel"
keys q
wait_for "PEVTUI-EXIT=[02]" 10
j=$(ls "$TMPD"/runs/*/journal.jsonl | head -n 1)
[ "$(grep -c '"type":"gate.open".*"gate":"elicit"' "$j")" = 3 ] || fail "not three elicit gates"
grep -q '"gate":"elicit".*"decision":"approve"' "$j" || fail "no accept journaled"
grep -q '"gate":"elicit".*"decision":"skip"' "$j" || fail "no decline journaled"
grep -q '"gate":"elicit".*"decision":"reject"' "$j" || fail "no cancel journaled"
grep -q '"type":"gate.decision".*"count"' "$j" && fail "the answer's content reached a gate.decision"
exit 0
