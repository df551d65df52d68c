#!/bin/sh
# The README's key table and the cockpit's help are one list (issue 29): the table between
# the README's keys markers is exactly what `pevtui --keys` prints (the rows `?` shows).
: "${PEVTUI:=./pevtui}"
: "${top_srcdir:=.}"
readme="$top_srcdir/README.md"
[ -r "$readme" ] || { echo "no README at $readme"; exit 99; }
T=$(mktemp -d /tmp/pevtui-keys.XXXXXX) || exit 99
trap 'rm -rf "$T"' EXIT
sed -n '/^<!-- keys: the output of pevtui --keys -->$/,/^<!-- \/keys -->$/p' "$readme" |
	sed '1d;$d' >"$T/readme"
[ -s "$T/readme" ] || { echo "FAIL: the README has no keys table between the markers"; exit 1; }
"$PEVTUI" --keys >"$T/keys" || { echo "FAIL: pevtui --keys failed"; exit 1; }
grep -q '^| `?` | this help |$' "$T/keys" || { echo "FAIL: --keys lacks ?"; exit 1; }
if ! diff -u "$T/readme" "$T/keys"; then
	echo "FAIL: the README's keys table differs from pevtui --keys (above); paste its output"
	exit 1
fi
echo ok
