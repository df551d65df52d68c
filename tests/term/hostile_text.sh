#!/bin/sh
# A model answer full of escape sequences and CJK text is drawn cleanly: no escape
# leaks, the terminal title is untouched, wide characters line up inside the frames.
. "$(dirname "$0")/lib.sh"

cat >"$TMPD/hostile.json" <<'EOS'
{
 "task": "hostile text",
 "planner": [{
  "goal": "\u76ee\u6807 \u001b]0;PWNED\u0007goal \u001b[31mred\u001b[0m",
  "context": "c",
  "steps": [{
   "step_id": "s1",
   "name": "\u65e5\u672c\u8a9e\u306e\u30b9\u30c6\u30c3\u30d7 \u001b[2J\u001b[Hstep\u001bP1$r0m\u001b\\ one",
   "description": "d",
   "actions": [],
   "acceptance_criteria": ["s1.md exists \u001b]8;;http://evil.invalid\u0007"],
   "expected_outputs": ["s1.md"],
   "dependencies": [],
   "estimated_complexity": "low"
  }],
  "success_criteria": ["done"],
  "rollback_strategy": "none"
 }],
 "executor": {"s1": [{
  "rounds": [{
   "text": "\u5f00\u59cb\u5de5\u4f5c \u001b[1;1H\u001b[2Jcleared? \u001b]52;c;SGVsbG8=\u0007clip \u009b31mC1\u001b[0m \ud83d\ude00 done\n\u4e2d\u6587\u4e2d\u6587\u4e2d\u6587\u4e2d\u6587\u4e2d\u6587\u4e2d\u6587\u4e2d\u6587\u4e2d\u6587\u4e2d\u6587\u4e2d\u6587\u4e2d\u6587\u4e2d\u6587\u4e2d\u6587\u4e2d\u6587\u4e2d\u6587\u4e2d\u6587\u4e2d\u6587\u4e2d\u6587\u4e2d\u6587\u4e2d\u6587\u4e2d\u6587\u4e2d\u6587\u4e2d\u6587\u4e2d\u6587\u4e2d\u6587\u4e2d\u6587 wide-end\n",
   "tool_calls": [{"name": "write_file", "input": {"path": "s1.md", "content": "x\n"}}]
  }],
  "final": {"reasoning": "r", "actions_taken": ["write_file s1.md"],
   "step_output": {"findings": "f", "artifacts": ["s1.md"], "meets_criteria": true},
   "confidence": 0.9, "notes": ""}
 }]}
}
EOS

start 100 30 --script "$TMPD/hostile.json" --gate none --provider sim "hostile"
wait_for "finished — passed" 30
# select the step so its log is shown
keys j
wait_for "clip C1"
expect "日本語のステップ step one"
expect "目标 goal red"
expect "开始工作 cleared\? clip C1 .* done"
refute "PWNED"
refute "\[2J|\[31m|\]52;|\]8;;|\\\$r0m"
expect "wide-end"
title=$(tmux -L "$SOCK" display -p '#{pane_title}')
case $title in *PWNED*) fail "the model changed the terminal title" ;; esac
# every frame row is exactly as wide as the screen: wide characters were measured
[ "$(screen_width)" -le 100 ] || fail "a line is wider than the screen"
screen | grep -E '^│' | while IFS= read -r line; do
	w=$(printf '%s\n' "$line" | wc -L)
	[ "$w" -eq 100 ] || { echo "row of width $w: $line"; exit 1; }
done || fail "a framed row is not 100 columns wide"
keys q
wait_for "PEVTUI-EXIT=0" 10
