#!/bin/sh
# What must keep working inside the sandbox: make, cc, python3 -c, git status and git
# commit in a workspace that is a repository (its hooks read-only but present and run),
# writing to $TMPDIR (the run's private temp folder, gone when the run ends).
. "${top_srcdir:-.}/tests/sandbox/lib.sh"

sb_run "true"
LINE=$(sb_line)
case "$LINE" in *"no layer confines"*) skip "no sandbox layer holds here ($LINE)" ;; esac
echo "layers: $LINE"

printf 'all: hello\nhello: hello.c\n\tcc -o hello hello.c\n' >"$WS/Makefile"
printf '#include <stdio.h>\nint main(void) { puts("built"); return 0; }\n' >"$WS/hello.c"
if command -v make >/dev/null 2>&1 && command -v cc >/dev/null 2>&1; then
	sb_run "make && ./hello"
	grep -q "^built" "$T/result" || fail "make and cc did not build and run"
fi
if command -v python3 >/dev/null 2>&1; then
	sb_run "python3 -c 'print(6 * 7)'"
	grep -q "^42" "$T/result" || fail "python3 -c did not run"
fi

sb_run 'echo scratch > "$TMPDIR/x" && cat "$TMPDIR/x" && echo "tmp=$TMPDIR"'
grep -q "^scratch" "$T/result" || fail "writing to \$TMPDIR failed"
tmp=$(sed -n 's/^tmp=//p' "$T/result")
[ -n "$tmp" ] || fail "TMPDIR was not set"
[ -e "$tmp" ] && fail "the private temp folder $tmp outlived its run"

if command -v git >/dev/null 2>&1; then
	git -C "$WS" init -q
	git -C "$WS" config user.email t@example.invalid
	git -C "$WS" config user.name T
	# a hook the operator put there runs (read-only is not absent)
	printf '#!/bin/sh\necho hook-ran > "$TMPDIR/hook"\n' >"$WS/.git/hooks/pre-commit"
	chmod +x "$WS/.git/hooks/pre-commit"
	sb_run 'git status --short && git add hello.c && git commit -q -m one && git log --oneline | wc -l && cat "$TMPDIR/hook"'
	grep -q "^1$" "$T/result" || fail "git commit did not commit"
	grep -q "^hook-ran" "$T/result" || fail "the repository's hook did not run"
	[ "$(git -C "$WS" log --oneline | wc -l)" = 1 ] || fail "the commit is not in the repository"
fi
echo "works under: $LINE"
exit 0
