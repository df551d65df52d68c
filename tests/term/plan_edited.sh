#!/bin/sh
# Issue 29 item 9: a step changed by an edit of the plan at its gate shows "(edited)" in
# the Plan pane, unzoomed, before and after the plan is approved, and only that step; the
# pane's right columns (complexity, attempts, time) line up from row to row.
. "$(dirname "$0")/lib.sh"

cat >"$TMPD/editor.sh" <<EOS
#!/bin/sh
sed 's/Review the Acme hosting agreement/Review the Acme deal/' "\$1" >"\$1.new" && mv "\$1.new" "\$1"
EOS
chmod +x "$TMPD/editor.sh"
TEST_ENV="VISUAL= EDITOR=$TMPD/editor.sh"

# The column of each step row's "×" (attempts): one value when the columns line up.
columns() {
	screen | grep -E "^│[○◆●✓·↻◌✗»] " | while IFS= read -r row; do
		printf '%s\n' "${row%%×*}" | wc -m
	done | sort -u | wc -l
}

start 120 40 --demo
wait_for "Gate: Approve the plan" 30
keys E
wait_for "acme  Review the Acme deal  \\[low\\]" 30
keys Escape
wait_gone "Gate: Approve the plan"
wait_for "acme Review the Acme .*\\(edited\\)"
refute "brightline .*\\(edited\\)"
[ "$(columns)" -eq 1 ] || fail "the right columns do not line up"
keys Enter
wait_for "Gate: Approve the plan"
keys a
wait_for "Gate: High-complexity step" 60
keys Escape
wait_gone "Gate: High-complexity step"
# Adopted: still this revision's edit. Steps have run: times of different widths.
wait_for "acme Review the Acme .*\\(edited\\)"
wait_for "✓ acme"
[ "$(columns)" -eq 1 ] || fail "the right columns do not line up once steps ran"
keys q
wait_for "Quit now\\?" 10
keys y
wait_for "PEVTUI-EXIT=3" 10
