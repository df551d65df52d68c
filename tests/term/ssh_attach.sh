#!/bin/sh
# pevtui --attach HOST:RUN through a real sshd (Debian's openssh-server, started here on
# 127.0.0.1 on a free port with a throwaway host key and user key): the screen is drawn
# here, the engine stays "there"; gates are answered over the pipe and the run finishes.
. "$(dirname "$0")/lib.sh"
. "$(dirname "$0")/attach_lib.sh"

SSHD=/usr/sbin/sshd
if [ ! -x "$SSHD" ] || ! command -v ssh >/dev/null 2>&1 || ! command -v ssh-keygen >/dev/null 2>&1
then
	echo "SKIP: openssh-server and openssh-client are not installed (apt-get install openssh-server)"
	exit 77
fi

S="$TMPD/ssh"
mkdir -p "$S" "$TMPD/xdg/pevtui"
ssh-keygen -q -t ed25519 -N '' -f "$S/host_key" || fail "ssh-keygen failed"
ssh-keygen -q -t ed25519 -N '' -f "$S/user_key" || fail "ssh-keygen failed"
# The "remote" side: this build's pevtui first in PATH, runs under the test's folder.
printf '%s\n' "#!/bin/sh" \
	"PATH='$(dirname "$PEVTUI")':\$PATH; export PATH" \
	"XDG_DATA_HOME='$TMPD/xdg'; export XDG_DATA_HOME" \
	"exec /bin/sh -c \"\$SSH_ORIGINAL_COMMAND\"" >"$S/remote.sh"
chmod +x "$S/remote.sh"
printf 'command="%s" %s\n' "$S/remote.sh" "$(cat "$S/user_key.pub")" >"$S/authorized_keys"
[ "$(id -u)" = 0 ] && mkdir -p /run/sshd

port=$(( 20000 + $$ % 20000 ))
tries=0
while :; do
	cat >"$S/sshd_config" <<CONF
Port $port
ListenAddress 127.0.0.1
HostKey $S/host_key
AuthorizedKeysFile $S/authorized_keys
PubkeyAuthentication yes
PasswordAuthentication no
KbdInteractiveAuthentication no
PermitRootLogin prohibit-password
StrictModes no
UsePAM no
PidFile $S/sshd.pid
CONF
	"$SSHD" -f "$S/sshd_config" -D -e 2>"$S/sshd.log" &
	sshd_pid=$!
	n=0
	while [ $n -lt 100 ] && ! grep -q "Server listening" "$S/sshd.log" &&
		kill -0 $sshd_pid 2>/dev/null; do
		sleep 0.1
		n=$((n + 1))
	done
	grep -q "Server listening" "$S/sshd.log" && break
	kill $sshd_pid 2>/dev/null
	tries=$((tries + 1))
	[ $tries -lt 10 ] || fail "sshd did not start: $(cat "$S/sshd.log")"
	port=$((port + 1))
done
# cleanup reads the test's exit status from $?: keep it across the kill.
trap 'rc=$?; kill $sshd_pid 2>/dev/null; (exit $rc); cleanup' EXIT

printf '[127.0.0.1]:%s %s\n' "$port" "$(cat "$S/host_key.pub")" >"$S/known_hosts"
cat >"$S/config" <<CONF
Host 127.0.0.1
	Port $port
	User $(id -un)
	IdentityFile $S/user_key
	IdentitiesOnly yes
	UserKnownHostsFile $S/known_hosts
	StrictHostKeyChecking yes
	BatchMode yes
CONF
printf '%s\n' "#!/bin/sh" "exec ssh -F '$S/config' \"\$@\"" >"$S/ssh"
chmod +x "$S/ssh"

runs="$TMPD/xdg/pevtui/runs"
"$PEVTUI" --detach --demo --sim-delay 0 --runs-dir "$runs" 2>"$TMPD/detach.err" ||
	fail "--detach failed: $(cat "$TMPD/detach.err")"
id=$(ls "$runs")

TEST_ENV="PEVTUI_SSH=$S/ssh" start 100 30 --attach "127.0.0.1:$id"
wait_for "Gate: Approve the plan" 30
keys a
wait_for "Gate: High-complexity step" 60
keys a
wait_for "finished — passed" 60
grep -q '"type":"run.end"' "$runs/$id/journal.jsonl" || fail "no run.end in the journal"
# The engine there stays at the end of its detached run while this cockpit is attached
# (issue 29: it can still be reopened), and leaves with it.
keys q
wait_for "PEVTUI-EXIT=0" 15
n=0
while ! flock -n "$runs/$id/lock" true; do
	[ $n -lt 300 ] || fail "the engine of $id did not leave when the last cockpit did"
	sleep 0.1
	n=$((n + 1))
done

# A run that does not exist there: said before any screen, exit 1.
tmux -L "$SOCK" kill-server >/dev/null 2>&1 # cleanup ends only the last server
SOCK="$SOCK-2"
TEST_ENV="PEVTUI_SSH=$S/ssh" start 100 30 --attach "127.0.0.1:nosuchrun"
wait_for "PEVTUI-EXIT=1" 30
grep -q "no run \"nosuchrun\"" "$TMPD/stderr" || fail "$(cat "$TMPD/stderr")"
