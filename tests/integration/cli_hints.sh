#!/bin/sh
# Issue 29 item 9, the command line's small things, each said in one line: a mistyped flag
# gets "did you mean"; --scenario without --demo says it is for the simulated models (it
# said "no provider"); --list-runs with no run says so and where it looked (it printed only
# a header).
: "${PEVTUI:=./pevtui}"
T=$(mktemp -d /tmp/pevtui-hints.XXXXXX) || exit 99
trap 'rm -rf "$T"' EXIT
fail() {
	echo "FAIL: $*"
	cat "$T/out"
	exit 1
}
run() {
	env -u ANTHROPIC_API_KEY -u OPENAI_API_KEY -u OPENAI_BASE_URL -u ANTHROPIC_BASE_URL \
		XDG_CONFIG_HOME="$T/config" "$PEVTUI" "$@" >"$T/out" 2>&1 </dev/null
}

run --demmo
[ $? -eq 1 ] || fail "--demmo did not fail"
grep -q "^pevtui: did you mean --demo?$" "$T/out" || fail "no suggestion for --demmo"
run --bugdet=1
grep -q "^pevtui: did you mean --budget?$" "$T/out" || fail "no suggestion for --bugdet=1"
run --xyzzy
grep -q "did you mean" "$T/out" && fail "a suggestion for --xyzzy"

run --headless --scenario shell --runs-dir "$T/runs" "a task"
[ $? -eq 1 ] || fail "--scenario without --demo did not fail"
grep -q "^pevtui: --scenario shell is a story of the simulated models: run it with --demo" \
	"$T/out" || fail "--scenario without --demo"

mkdir "$T/empty"
run --list-runs --runs-dir "$T/empty"
[ $? -eq 0 ] || fail "--list-runs failed"
[ "$(cat "$T/out")" = "no runs yet in $T/empty (another folder: --runs-dir DIR)" ] ||
	fail "--list-runs on an empty folder"
echo ok
