#!/bin/sh
# Under a decimal-comma locale (de_DE.UTF-8, made here with localedef) numbers keep their
# point: "--budget 5.25" is 5.25 dollars (strtod had read "5" and refused the rest), and
# what pevtui prints says $0.0620, not $0,0620, as the journal and reports do.
: "${PEVTUI:=./pevtui}"
command -v localedef >/dev/null 2>&1 || { echo "no localedef: skipped"; exit 77; }
[ -f /usr/share/i18n/locales/de_DE ] ||
	{ echo "no de_DE locale source (Debian package locales): skipped"; exit 77; }
T=$(mktemp -d /tmp/pevtui-locale.XXXXXX) || exit 99
trap 'rm -rf "$T"' EXIT
mkdir "$T/loc"
localedef -i de_DE -f UTF-8 "$T/loc/de_DE.UTF-8" >/dev/null 2>&1
[ "$(LOCPATH="$T/loc" LC_ALL=de_DE.UTF-8 locale decimal_point 2>/dev/null)" = "," ] ||
	{ echo "could not make a decimal-comma locale: skipped"; exit 77; }

fail() {
	echo "FAIL: $*"
	cat "$T/out"
	exit 1
}

# glibc keeps the LOCPATH list it splits (__argz_add_sep) out of LeakSanitizer's sight: a
# leak of the test's LOCPATH, not of pevtui (under --enable-sanitizers only).
printf 'leak:__argz_add_sep\n' >"$T/lsan.supp"
LSAN_OPTIONS="suppressions=$T/lsan.supp${LSAN_OPTIONS:+:$LSAN_OPTIONS}" \
	LOCPATH="$T/loc" LC_ALL=de_DE.UTF-8 "$PEVTUI" --demo --headless --yes --sim-delay 0 \
	--budget 5.25 --runs-dir "$T/runs" >"$T/out" 2>&1 || fail "the run did not pass"
grep -q 'cost so far \$0\.[0-9]' "$T/out" || fail "no cost written with a point"
grep -q '\$[0-9]*,[0-9]' "$T/out" && fail "a cost written with a comma"
grep -q '"budget_usd":5.25[,}]' "$T"/runs/*/journal.jsonl || fail "the budget is not 5.25"
exit 0
