#!/bin/sh
# Two shell gates open at once (--parallel 2): w lists them, one line each, and the second
# one picked there becomes the dialog and is answered first. The dialog shows the time
# limit and why the allow list asks: "echo" is allowed, but not with a redirection.
. "$(dirname "$0")/lib.sh"

cat >"$TMPD/config" <<'INI'
[tools]
shell_allow = echo
shell_timeout = 30
INI
cat >"$TMPD/script.json" <<'JSON'
{
 "task": "Two files by shell",
 "planner": [{"goal": "{{task}}", "steps": [
   {"step_id": "first", "name": "First file", "description": "Write first.txt.",
    "acceptance_criteria": ["first.txt exists"], "expected_outputs": ["first.txt"],
    "dependencies": [], "estimated_complexity": "low"},
   {"step_id": "second", "name": "Second file", "description": "Write second.txt.",
    "acceptance_criteria": ["second.txt exists"], "expected_outputs": ["second.txt"],
    "dependencies": [], "estimated_complexity": "low"}]}],
 "executor": {
  "first": [{"rounds": [{"text": "Writing.", "tool_calls": [{"name": "run_shell",
     "input": {"command": "echo one > first.txt"}}]}],
   "final": {"reasoning": "wrote it", "actions_taken": ["run_shell"],
     "step_output": {"findings": "first.txt", "artifacts": ["first.txt"],
       "meets_criteria": true}, "confidence": 0.9, "notes": ""}}],
  "second": [{"rounds": [{"text": "Writing.", "tool_calls": [{"name": "run_shell",
     "input": {"command": "echo two > second.txt"}}]}],
   "final": {"reasoning": "wrote it", "actions_taken": ["run_shell"],
     "step_output": {"findings": "second.txt", "artifacts": ["second.txt"],
       "meets_criteria": true}, "confidence": 0.9, "notes": ""}}]}
}
JSON

start 110 34 --config "$TMPD/config" --provider sim --script "$TMPD/script.json" \
	--gate shell --parallel 2
wait_for "Gate: Run a shell command\\? \\(1 of 2, w list\\)" 30
expect "Time limit: 30 s"
expect 'Allow list: no — starts with "echo" but holds a redirection'
keys w
wait_for "Waiting gates \\(2\\)"
expect "▸ 1  shell +(first|second) +\\$ echo (one|two) > (first|second).txt"
expect "  2  shell +(first|second) +\\$ echo"
second=$(screen | sed -n 's/^.*  2  shell  *\([a-z]*\) .*$/\1/p' | head -n 1)
[ -n "$second" ] || fail "no second row"
# Narrow, a row cut to fit ends in "…" (issue 29), and comes back whole when wide again.
tmux -L "$SOCK" resize-window -x 44 -y 34
wait_width_le 44
wait_for "▸ 1  shell .*…"
tmux -L "$SOCK" resize-window -x 110 -y 34
wait_for "▸ 1  shell +(first|second) +\\$ echo (one|two) > (first|second).txt"
keys j
wait_for "▸ 2  shell +$second"
keys Enter
wait_gone "Waiting gates"
wait_for "Gate: Run a shell command\\? \\(2 of 2, w list\\)"
expect "Asked by step $second;"
keys a
wait_for "Gate: Run a shell command\\?"
wait_gone "Asked by step $second;" 10
keys a
wait_for "finished — passed" 60
j=$(ls "$TMPD"/runs/*/journal.jsonl | head -n 1)
first_decided=$(grep '"type":"gate.decision"' "$j" | head -n 1 | sed 's/.*"step_id":"\([a-z]*\)".*/\1/')
[ "$first_decided" = "$second" ] || fail "the gate picked ($second) was not answered first ($first_decided)"
keys q
wait_for "PEVTUI-EXIT=0" 10
