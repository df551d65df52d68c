#!/bin/sh
# The official MCP conformance suite's client scenarios that are not about sign-in, run
# against pevtui's MCP client (tests/mcp/conformance_client; see conformance_lib.sh for
# how the suite is installed, and SKIP when it cannot be).
: "${top_srcdir:=.}"
. "$top_srcdir/tests/mcp/conformance_lib.sh"
conformance_ready
rc=0
for s in initialize tools_call sse-retry elicitation-sep1034-client-defaults; do
	conformance_run "$s" || rc=1
done
exit $rc
