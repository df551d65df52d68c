#!/bin/sh
# MCP sign-in against an authorization server of the tests' own (tests/mcp/
# oauth_test_server): a run before sign-in is a notice naming --mcp-login, never a hang;
# --mcp-login through a "browser" that follows the approval; refresh with rotation; two
# processes refreshing at once lose nothing; a run calls the tool and no token reaches
# any file of the run folder (nor any output); a revoked token; a tampered state; the
# paste-the-URL path (SSH); --mcp-logout; a server without PKCE S256 refused.
: "${top_builddir:=.}"
PEVTUI=${PEVTUI:-$top_builddir/pevtui}
case $PEVTUI in /*) ;; *) PEVTUI="$(pwd)/$PEVTUI" ;; esac
SRV=$top_builddir/tests/mcp/oauth_test_server
case $SRV in /*) ;; *) SRV="$(pwd)/$SRV" ;; esac
FOLLOW="$top_builddir/tests/mcp/conformance_client"
case $FOLLOW in /*) ;; *) FOLLOW="$(pwd)/$FOLLOW" ;; esac
FOLLOW="$FOLLOW --follow"
TMPD=$(mktemp -d /tmp/pevtui-oauth.XXXXXX) || exit 99
XDG_DATA_HOME=$TMPD/data
HOME=$TMPD/home
export XDG_DATA_HOME HOME
unset BROWSER DISPLAY WAYLAND_DISPLAY
mkdir -p "$HOME"
STORE=$XDG_DATA_HOME/pevtui/mcp-auth.json
srv_pids=""
cleanup() {
	exec 7>&- 2>/dev/null
	exec 6>&- 2>/dev/null
	for p in $srv_pids; do wait "$p" 2>/dev/null; done
	[ -n "${KEEP:-}" ] || rm -rf "$TMPD"
}
trap cleanup EXIT
fail() {
	echo "FAIL: $*"
	exit 1
}
# waits (bounded) until file $1 is not empty
wait_file() {
	i=0
	while [ ! -s "$1" ] && [ $i -lt 200 ]; do
		sleep 0.05
		i=$((i + 1))
	done
	[ -s "$1" ]
}
# start_server TAG FD ARGS…: the server's stdin is a fifo held open on FD; its port in $port
start_server() {
	tag=$1
	fd=$2
	shift 2
	mkfifo "$TMPD/$tag.in"
	"$SRV" "$@" <"$TMPD/$tag.in" >"$TMPD/$tag.port" 2>"$TMPD/$tag.err" &
	srv_pids="$srv_pids $!"
	eval "exec $fd>\"\$TMPD/\$tag.in\""
	wait_file "$TMPD/$tag.port" || fail "the test server did not start: $(cat "$TMPD/$tag.err")"
	port=$(cat "$TMPD/$tag.port")
}
admin() { "$SRV" --get "http://127.0.0.1:$1/admin/$2"; }
count() { admin "$1" stats | sed -n "s/.*\"$2\":\\([0-9]*\\).*/\\1/p"; }
n=0
# pv ARGS…: runs pevtui (30 s at most) with its output kept for the final leak check
pv() {
	n=$((n + 1))
	timeout 30 "$PEVTUI" "$@" >"$TMPD/out.$n" 2>"$TMPD/err.$n"
}

start_server one 7 --expires 2
P1=$port
printf '[mcp.remote]\nurl = http://127.0.0.1:%s/mcp\n' "$P1" >"$TMPD/config"

# Before sign-in: a notice that names the command, at once.
pv --config "$TMPD/config" --list-tools </dev/null
grep -q 'MCP server remote needs sign-in: run `pevtui --mcp-login remote`' "$TMPD/err.$n" ||
	fail "no sign-in notice: $(cat "$TMPD/err.$n")"
[ "$(count "$P1" authorizations)" = 0 ] || fail "a run started a sign-in"

# Sign-in through the browser, redirect to the listener on 127.0.0.1.
BROWSER="$FOLLOW" pv --config "$TMPD/config" --mcp-login remote </dev/null ||
	fail "--mcp-login failed: $(cat "$TMPD/err.$n")"
grep -q "remote: connected" "$TMPD/out.$n" || fail "--mcp-login said: $(cat "$TMPD/out.$n")"
[ "$(count "$P1" authorizations)" = 1 ] || fail "not one authorization"
[ "$(stat -c %a "$STORE")" = 600 ] || fail "the store is mode $(stat -c %a "$STORE")"
grep -q '"refresh_token":.*"SECRET-RT-' "$STORE" || fail "no refresh token stored"
rt1=$(sed -n 's/.*"refresh_token":[^"]*"\([^"]*\)".*/\1/p' "$STORE")

# The token lives 2 s: once it is near its end the next use refreshes it, and keeps the
# rotated refresh token.
expired() {
	e=$(sed -n 's/.*"expires_at":[^0-9]*\([0-9]*\).*/\1/p' "$STORE")
	i=0
	while [ "$(date +%s)" -lt "$e" ] && [ $i -lt 100 ]; do
		sleep 0.05
		i=$((i + 1))
	done
}
expired
pv --config "$TMPD/config" --list-tools </dev/null || fail "--list-tools after sign-in: $(cat "$TMPD/err.$n")"
grep -Eq '^remote__whoami +remote' "$TMPD/out.$n" || fail "no remote__whoami: $(cat "$TMPD/out.$n")"
r1=$(count "$P1" refreshes)
[ "$r1" -ge 1 ] || fail "no refresh: $(admin "$P1" stats)"
rt2=$(sed -n 's/.*"refresh_token":[^"]*"\([^"]*\)".*/\1/p' "$STORE")
[ -n "$rt2" ] && [ "$rt2" != "$rt1" ] || fail "the rotated refresh token was not stored"

# Two processes refreshing at once: both work, no spent refresh token is used again.
expired
timeout 30 "$PEVTUI" --config "$TMPD/config" --list-tools >"$TMPD/a.out" 2>"$TMPD/a.err" </dev/null &
a=$!
timeout 30 "$PEVTUI" --config "$TMPD/config" --list-tools >"$TMPD/b.out" 2>"$TMPD/b.err" </dev/null &
b=$!
wait $a || fail "the first of two processes failed: $(cat "$TMPD/a.err")"
wait $b || fail "the second of two processes failed: $(cat "$TMPD/b.err")"
grep -q remote__whoami "$TMPD/a.out" && grep -q remote__whoami "$TMPD/b.out" ||
	fail "a process did not reach the server"
[ "$(count "$P1" reused_refresh)" = 0 ] || fail "a spent refresh token was used again (a lost rotation)"
[ "$(count "$P1" refreshes)" -gt "$r1" ] || fail "no refresh by two processes: $(admin "$P1" stats)"

# A run calls the tool; no token in any file of the run folder.
cat >"$TMPD/script.json" <<EOF2
{
 "task": "Ask who signed in",
 "planner": [{"goal": "{{task}}", "steps": [{"step_id": "ask", "name": "Ask",
   "description": "Call whoami.", "acceptance_criteria": ["called"], "dependencies": [],
   "estimated_complexity": "low"}]}],
 "executor": {"ask": [{"rounds": [
   {"text": "Asking.", "tool_calls": [{"name": "remote__whoami", "input": {}}]}],
   "final": {"reasoning": "called", "actions_taken": ["mcp"],
     "step_output": {"findings": "{{tool_result}}", "artifacts": [],
       "meets_criteria": true}, "confidence": 0.9}}]}
}
EOF2
pv --config "$TMPD/config" --headless --yes --provider sim --script "$TMPD/script.json" \
	--sim-delay 0 --runs-dir "$TMPD/runs" </dev/null || fail "the run failed: $(cat "$TMPD/err.$n")"
j=$(ls "$TMPD"/runs/*/journal.jsonl)
grep -q '"type":"tool.result".*"tool":"remote__whoami".*signed in as the operator' "$j" ||
	fail "the run did not call remote__whoami"
if grep -rl "SECRET-" "$TMPD/runs" >/dev/null 2>&1; then
	fail "a token is in the run folder: $(grep -rl "SECRET-" "$TMPD/runs")"
fi

# A revoked token: a notice again, no hang, no sign-in from a run.
admin "$P1" revoke >/dev/null
pv --config "$TMPD/config" --list-tools </dev/null
grep -q 'needs sign-in: run `pevtui --mcp-login remote`' "$TMPD/err.$n" ||
	fail "no sign-in notice after revocation: $(cat "$TMPD/err.$n")"

# A tampered state: refused.
admin "$P1" tamper >/dev/null
BROWSER="$FOLLOW" pv --config "$TMPD/config" --mcp-login remote </dev/null &&
	fail "--mcp-login took a redirect with a forged state"
grep -q "state does not match" "$TMPD/err.$n" || fail "no state error: $(cat "$TMPD/err.$n")"

# Logout forgets the server's tokens.
pv --config "$TMPD/config" --mcp-logout remote || fail "--mcp-logout failed"
grep -q "Signed out of remote" "$TMPD/out.$n" || fail "--mcp-logout said: $(cat "$TMPD/out.$n")"
grep -q "127.0.0.1:$P1/mcp" "$STORE" && fail "the tokens are still stored after --mcp-logout"

# The paste-the-URL path: the "browser" (another machine) does not come back to the
# listener; the operator pastes the address it ended on.
start_server two 6
P2=$port
printf '[mcp.remote]\nurl = http://127.0.0.1:%s/mcp\n' "$P2" >"$TMPD/config2"
mkfifo "$TMPD/paste.in"
PASTE_FILE=$TMPD/pasted BROWSER="$SRV --approve" timeout 30 "$PEVTUI" --config "$TMPD/config2" \
	--mcp-login remote <"$TMPD/paste.in" >"$TMPD/paste.out" 2>"$TMPD/paste.err" &
p=$!
exec 5>"$TMPD/paste.in"
wait_file "$TMPD/pasted" || fail "the browser step did not run: $(cat "$TMPD/paste.err")"
grep -q "paste the address" "$TMPD/paste.err" || fail "no paste hint: $(cat "$TMPD/paste.err")"
cat "$TMPD/pasted" >&5
exec 5>&-
wait $p || fail "--mcp-login with a pasted URL failed: $(cat "$TMPD/paste.err")"
grep -q "127.0.0.1:$P2/mcp" "$STORE" || fail "the pasted sign-in stored nothing"

# A server without PKCE S256: refused.
pv --config "$TMPD/config2" --mcp-logout remote || fail "--mcp-logout failed"
admin "$P2" nopkce >/dev/null
BROWSER="$FOLLOW" pv --config "$TMPD/config2" --mcp-login remote </dev/null &&
	fail "signed in to a server without PKCE"
grep -q "does not support PKCE with S256" "$TMPD/err.$n" || fail "no PKCE refusal: $(cat "$TMPD/err.$n")"

# No token on any screen or output.
if cat "$TMPD"/out.* "$TMPD"/err.* "$TMPD"/a.* "$TMPD"/b.* "$TMPD"/paste.out "$TMPD"/paste.err | grep -q "SECRET-"; then
	fail "a token was printed"
fi
echo "PASS: MCP sign-in"
