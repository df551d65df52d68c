#!/bin/sh
# Sign-in (issue 27): every authorization scenario of the official MCP conformance suite
# for 2025-11-25 and the two 2025-03-26 back-compatibility ones, against pevtui's MCP
# client with sign-in allowed (tests/mcp/conformance_client; its "browser" follows the
# suite's at-once approval to pevtui's listener on 127.0.0.1). Tokens go to a folder of
# the test's own, one per scenario: the suite's servers take any port, and a token stored
# for http://localhost:PORT/mcp by an earlier scenario would be sent (and taken) again,
# so no sign-in would happen to be checked. SKIP when the suite cannot be installed (conformance_lib.sh).
: "${top_srcdir:=.}"
. "$top_srcdir/tests/mcp/conformance_lib.sh"
conformance_ready
TMPD=$(mktemp -d /tmp/pevtui-conf-auth.XXXXXX) || exit 99
trap '[ -n "${KEEP:-}" ] || rm -rf "$TMPD"' EXIT
unset BROWSER
rc=0
n=0
for s in metadata-default metadata-var1 metadata-var2 metadata-var3 basic-cimd \
	scope-from-www-authenticate scope-from-scopes-supported scope-omitted-when-undefined \
	scope-step-up scope-retry-limit token-endpoint-auth-basic token-endpoint-auth-post \
	token-endpoint-auth-none pre-registration 2025-03-26-oauth-metadata-backcompat \
	2025-03-26-oauth-endpoint-fallback; do
	n=$((n + 1))
	XDG_DATA_HOME=$TMPD/data-$n
	export XDG_DATA_HOME
	conformance_run "auth/$s" || rc=1
done
# The store is the operator's only: 0600 in a 0700 folder.
f=$XDG_DATA_HOME/pevtui/mcp-auth.json
if [ ! -f "$f" ]; then
	echo "FAIL: no token store at $f"
	rc=1
elif [ "$(stat -c %a "$f")" != 600 ] || [ "$(stat -c %a "$XDG_DATA_HOME/pevtui")" != 700 ]; then
	echo "FAIL: the token store is $(stat -c %a "$f") in a $(stat -c %a "$XDG_DATA_HOME/pevtui") folder"
	rc=1
fi
exit $rc
