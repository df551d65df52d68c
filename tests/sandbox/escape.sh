#!/bin/sh
# The escape suite: one case per line of what a confined command cannot do (issue 26),
# through the real binary, each asserting that the attempt failed and that nothing
# outside changed. escape_landlock.sh runs it again without bubblewrap.
. "${top_srcdir:-.}/tests/sandbox/lib.sh"

sb_run "true"
[ "$sb_status" = 0 ] || fail "a plain run did not pass"
LINE=$(sb_line)
echo "layers: $LINE"
case "$LINE" in
*"no layer confines"*) skip "no sandbox layer holds on this machine ($LINE)" ;;
"") fail "run.start holds no sandbox line" ;;
esac
case "$LINE" in *bubblewrap*) bwrap=yes ;; *) bwrap=no ;; esac
case "$LINE" in *seccomp*) seccomp=yes ;; *) seccomp=no ;; esac
abi=$(echo "$LINE" | sed -n 's/.*Landlock v\([0-9]*\).*/\1/p')

# ---- writes outside the writable roots -------------------------------------------------
sb_run "echo pwned > $OUT/abs"
[ -e "$OUT/abs" ] && fail "an absolute path outside was written"
grep -q "sandbox denied: $OUT/abs" "$T/result" || fail "the denial was not told with its path"

sb_run "echo pwned > ../outside/dotdot; mkdir ../outside/dir"
[ -e "$OUT/dotdot" ] || [ -e "$OUT/dir" ] && fail "a .. path outside was written"

sb_run "ln -s $OUT planted && echo pwned > planted/through-link"
[ -e "$OUT/through-link" ] && fail "a planted symlink led a write outside"
[ -L "$WS/planted" ] || fail "the link itself (inside) was not made: was the command run?"

sb_run "ln $OUT/victim hard; echo pwned >> hard; mv $OUT/victim moved"
[ "$(cat "$OUT/victim")" = victim ] || fail "a hard link or rename changed a file outside"

shm=pevtui-escape-$(basename "$T")
sb_run "echo pwned > /dev/shm/$shm"
[ -e "/dev/shm/$shm" ] && { rm -f "/dev/shm/$shm"; fail "/dev/shm was written"; }

# ---- read-only mode; the config's extra writable roots and hidden paths ----------------
sb_run "echo x > made-in-read-only; echo y > \"\$TMPDIR/t\" && echo tmp-ok" --sandbox read-only
[ -e "$WS/made-in-read-only" ] && fail "read-only mode let the workspace be written"
grep -q "^tmp-ok" "$T/result" || fail "read-only mode refused the private TMPDIR"
mkdir -p "$OUT/extra"
echo "SECRET-MARK deny" >"$OUT/denied"
printf '[sandbox]\nwritable = %s\ndeny_read = %s\n' "$OUT/extra" "$OUT/denied" \
	>"$XDG_CONFIG_HOME/pevtui/config"
sb_run "echo ok > $OUT/extra/made; cat $OUT/denied"
[ -e "$OUT/extra/made" ] || fail "a writable root from the config could not be written"
grep -q SECRET-MARK "$T/result" && fail "a deny_read path from the config was read"
printf '# SECRET-MARK config\n' >"$XDG_CONFIG_HOME/pevtui/config"

# ---- secrets: hidden, not merely read-only ------------------------------------------------
sb_run "cat $HOME/.ssh/id_ed25519 $HOME/.gnupg/secring $HOME/.aws/credentials \
$HOME/.config/gcloud/token $HOME/.netrc $HOME/.docker/config.json \
$XDG_CONFIG_HOME/pevtui/config $XDG_DATA_HOME/pevtui/data; \
cat $T/runs.$((n + 1))/*/journal.jsonl | head -c 300; echo pwned > $HOME/.ssh/planted"
grep -q SECRET-MARK "$T/result" && fail "a secret was read"
grep -q '"run.start"' "$T/result" && fail "pevtui's runs folder was read"
[ -e "$HOME/.ssh/planted" ] && fail "a file was planted in ~/.ssh"

# ---- read-only inside the workspace: .git/hooks, .git/config, .mcp.json ------------------
if [ "$bwrap" = yes ] && command -v git >/dev/null 2>&1; then
	git init -q "$WS" && echo '{"mcpServers": {}}' >"$WS/.mcp.json"
	cfg=$(cat "$WS/.git/config")
	sb_run "echo evil > .git/hooks/pre-commit; chmod +x .git/hooks/pre-commit; \
echo '[core] hooksPath = /tmp' >> .git/config; echo '{\"mcpServers\": {\"x\": {}}}' > .mcp.json"
	[ -e "$WS/.git/hooks/pre-commit" ] && fail "a hook was planted"
	[ "$(cat "$WS/.git/config")" = "$cfg" ] || fail ".git/config was changed"
	grep -q '"x"' "$WS/.mcp.json" && fail ".mcp.json was changed"
	rm -rf "$WS/.git" "$WS/.mcp.json"
else
	echo "skipped: read-only paths inside the workspace need bubblewrap (Landlock can only grant)"
fi

# ---- network off ---------------------------------------------------------------------------
sb_serve tcp 0 "$T/tcp.count"
port=$(cat "$T/tcp.count.port")
sb_serve udp 0 "$T/udp.count"
uport=$(cat "$T/udp.count.port")
sb_serve abstract "pevtui-escape-$$" "$T/abs.count"
sb_run "$PROBE tcp $port; $PROBE tcp6 $port; $PROBE udp $uport; $PROBE raw; \
$PROBE abstract pevtui-escape-$$"
grep -q ALLOWED "$T/result" && [ "$seccomp" = yes ] && fail "a socket was allowed with seccomp on"
[ "$(cat "$T/tcp.count")" = 0 ] || fail "the TCP server on 127.0.0.1 was reached"
[ "$(cat "$T/udp.count")" = 0 ] || fail "the UDP server on 127.0.0.1 was reached"
if [ "$bwrap" = yes ] || [ "${abi:-0}" -ge 6 ]; then
	[ "$(cat "$T/abs.count")" = 0 ] || fail "the host's abstract unix socket was reached"
else
	echo "skipped: abstract sockets need bubblewrap or Landlock v6 (have v$abi)"
fi

# ---- other processes: ptrace, process_vm_*, signals, /proc; io_uring, keyctl ----------------
sleep 300 &
victim=$!
bg_pids="$bg_pids $victim"
sb_run "$PROBE ptrace $victim; $PROBE vmread $victim; $PROBE kill $victim; $PROBE io_uring; \
$PROBE keyctl"
kill -0 "$victim" 2>/dev/null || fail "a process outside was signalled"
grep -q "ALLOWED: ptrace" "$T/result" && fail "ptrace of a process outside was allowed"
grep -q "ALLOWED: process_vm" "$T/result" && fail "process_vm_readv was allowed"
grep -q "ALLOWED: a signal" "$T/result" && fail "a signal outside was allowed"
if [ "$seccomp" = yes ]; then
	grep -q "denied: io_uring_setup" "$T/result" || fail "io_uring was not refused"
	grep -q "denied: keyctl" "$T/result" || fail "keyctl was not refused"
fi
# pevtui and its keeper: the shell's parent and grandparent without bubblewrap (with it,
# they are outside the PID namespace: below)
if [ "$bwrap" = no ]; then
	sb_run "pp=\$(sed -n 's/^PPid:[[:space:]]*//p' /proc/\$PPID/status); \
for p in \$PPID \$pp; do grep -aq PATH /proc/\$p/environ && echo ENVIRON\"-READ \$p\"; \
kill -0 \$p && echo SIGNAL\"-OK \$p\"; done; echo parents \$PPID \$pp"
	grep -q "^parents [0-9]* [0-9]" "$T/result" || fail "the parents were not found"
	grep -q "^ENVIRON-READ" "$T/result" && fail "pevtui's environment was read"
	grep -q "^SIGNAL-OK" "$T/result" && [ "${abi:-0}" -ge 6 ] && fail "pevtui could be signalled"
fi

# ---- privileges: no_new_privs; outliving: a PID namespace -----------------------------------
sb_run "$PROBE nnp"
grep -q "no_new_privs=1" "$T/result" || fail "no_new_privs is not set"
if [ "$bwrap" = yes ]; then
	sb_run "test -e /proc/$victim && echo VISI\"BLE\"; ls /proc | grep -c '^[0-9]'"
	grep -q "^VISIBLE" "$T/result" && fail "processes outside are visible (no PID namespace)"
fi
echo "escape suite passed under: $LINE"
exit 0
