#!/bin/sh
# The shell gate: the exact command and its step are shown; e edits the command in a
# one-line form and the gate comes back showing the edited command, marked edited, with
# what the model had asked for (issue 29: it ran at once); a runs it; s refuses the next
# command and the step goes on, and the logs call that "refuse" as the key does; the run
# passes. A second run is stopped with x at its shell gate (asks first).
. "$(dirname "$0")/lib.sh"

cat >"$TMPD/script.json" <<'JSON'
{
 "task": "Write a greeting with the shell",
 "planner": [{"goal": "{{task}}", "steps": [{"step_id": "greet", "name": "Greet by shell",
   "description": "Write out.txt with a shell command.",
   "acceptance_criteria": ["out.txt holds a greeting"], "expected_outputs": ["out.txt"],
   "dependencies": [], "estimated_complexity": "low"}]}],
 "executor": {"greet": [{"rounds": [
   {"text": "Writing the file.", "tool_calls": [{"name": "run_shell",
     "input": {"command": "echo hello > out.txt"}}]},
   {"text": "Cleaning up.", "tool_calls": [{"name": "run_shell",
     "input": {"command": "rm -f out.txt"}}]}],
   "final": {"reasoning": "wrote it", "actions_taken": ["run_shell"],
     "step_output": {"findings": "out.txt written", "artifacts": ["out.txt"],
       "meets_criteria": true}, "confidence": 0.9,
     "notes": "run_shell: the cleanup was refused, so out.txt stays, as intended"}}]}
}
JSON

start 100 30 --provider sim --script "$TMPD/script.json" --gate shell
wait_for "Gate: Run a shell command" 30
expect "echo hello > out.txt"
expect "Greet by shell"
expect "e edit command"
expect "s refuse"
keys '?'
wait_for "refuse the command, the step goes on"
keys Escape
wait_gone "refuse the command, the step goes on"
expect "Gate: Run a shell command"
keys e
wait_for "Edit the shell command"
keys C-u "echo edited > out.txt" Enter
wait_for "Gate: Run the edited shell command\\?" 10
expect "Command \\(edited\\):"
expect "echo edited > out.txt"
expect "the model had asked for:"
expect "echo hello > out.txt"
[ ! -e "$(ls -d "$TMPD"/runs/*/workspace | head -n 1)/out.txt" ] ||
	fail "the edited command ran before it was approved"
keys a
wait_for "rm -f out.txt" 30
keys s
wait_for "command refused" 10
# The run log (the goal row) says refuse, as the key does; the journal keeps skip.
keys Escape g
wait_for "Gate shell greet: refuse by operator" 30
wait_for "finished — passed" 60
keys q
wait_for "PEVTUI-EXIT=0" 10
ws=$(ls -d "$TMPD"/runs/*/workspace | head -n 1)
[ "$(cat "$ws/out.txt" 2>/dev/null)" = "edited" ] || fail "out.txt is not from the edited command"
j=$(ls "$TMPD"/runs/*/journal.jsonl | head -n 1)
grep -q '"gate":"shell".*"decision":"edit"' "$j" || fail "no edit decision journaled"
grep -q '"gate":"shell".*"edited":true' "$j" || fail "the gate did not ask again, edited"
grep -q '"tool":"run_shell".*"approval":"edited"' "$j" || fail "the run is not said edited"
grep -q '"gate":"shell".*"decision":"skip"' "$j" || fail "no skip decision journaled"

# x at a shell gate asks, then aborts the run.
tmux -L "$SOCK" kill-server >/dev/null 2>&1
rm -rf "$TMPD/runs"
start 100 30 --provider sim --script "$TMPD/script.json" --gate shell
wait_for "Gate: Run a shell command" 30
keys x
wait_for "Reject this gate\\?"
keys y
wait_for "finished — aborted" 30
keys q
wait_for "PEVTUI-EXIT=3" 10
ws=$(ls -d "$TMPD"/runs/*/workspace | head -n 1)
[ ! -e "$ws/out.txt" ] || fail "the rejected command ran"
