#!/usr/bin/env bash
# `--remote` (docs/remote.md) from a "laptop" to a login node over real ssh, with the netns Slurm cluster behind it.
# What is real: Debian's sshd (run by this test in the cluster's hub namespace, where slurmctld runs and sbatch
# works: the login node), the system ssh client, the hub's Slurm, the network between namespaces. What stands in:
# the laptop is node n2's network namespace (it reaches the login node only over that network, and has no
# SLURM_CONF); the far home is this test's directory (sshd's SetEnv gives the session XDG dirs of their own there);
# the launcher copied across is this build's (dynamically linked: the far side is this machine, so its libraries
# are there; t0720 tests the static build that a real far side gets, from HPCLAUNCH_REMOTE_LAUNCHERS).
# Checks: a bad --remote, an unreachable host and no launcher here for the far architecture give one line and a
# non-zero exit; the far side's older launcher is replaced, once, and not again; submit (its --site-file sent
# along), jobs, status --json, logs, wait, cancel and report -o (the page comes back to the laptop) all run over one
# connection (sshd accepts one login); the far exit status comes back; submit --snapshot sends the laptop's code
# (a git tree with an uncommitted change), which the job runs, and job.json names its commit; a connection killed while sbatch runs leaves
# exactly one job, the retry printing its id; with a key that has a passphrase and no terminal, an askpass program
# (SSH_ASKPASS_REQUIRE=force) is asked once for a whole session of submit, status, wait, logs and cancel, and again
# by a session in another control folder. About 20 s.
source "$(dirname "$0")/lib.sh"
source "$(dirname "$0")/lib-netns.sh"
need_hpclaunch
need_netns_cluster
need_cmd ssh ssh-keygen /usr/sbin/sshd
cluster=$HPCLAUNCH_CLUSTER_DIR
pfx=hl$(printf '%s' "$cluster" | md5sum | cut -c1-6)  # scripts/test-cluster.sh's prefix for the cluster's namespaces
t=$test_tmp
far=$t/far
mkdir -p "$t/ssh" "$far/cache" "$far/state" "$far/config" "$far/tmp" "$far/bin" "$far/jobs" "$t/launchers" "$t/laptop"
# The connection's socket folder: a short path (a unix socket's is at most 107 bytes).
run_dir=$(mktemp -d /tmp/hr.XXXXXX)
sshd_pid=""
cleanup() {
  local rc=$?
  [ -z "$sshd_pid" ] || kill "$sshd_pid" 2>/dev/null || true
  [ ! -f "$t/ssh/sshd.pid" ] || kill "$(cat "$t/ssh/sshd.pid")" 2>/dev/null || true
  for p in $(pgrep -f "^ssh: $run_dir/" || true); do kill "$p" 2>/dev/null || true; done  # this test's ssh master
  for id in $(cat "$t/submitted" 2>/dev/null); do scancel "$id" 2>/dev/null || true; done
  rm -rf "$run_dir"
  _lib_cleanup "$rc"
}
trap cleanup EXIT

# The login node: sshd on the hub's port 2222, its host key and the laptop's key made here.
ssh-keygen -q -t ed25519 -N '' -f "$t/ssh/host_key"
ssh-keygen -q -t ed25519 -N '' -f "$t/ssh/id"
cp "$t/ssh/id.pub" "$t/ssh/authorized_keys"
echo "[hub]:2222 $(cut -d' ' -f1,2 "$t/ssh/host_key.pub")" >"$t/ssh/known_hosts"
# sbatch on the login node, slowed when $t/slow exists: the window in which the connection is killed.
cat >"$far/bin/sbatch" <<SH
#!/bin/bash
if [ -e $t/slow ]; then touch $t/sbatch-started; sleep 4; fi
exec $cluster/bin/sbatch "\$@"
SH
chmod 755 "$far/bin/sbatch"
cat >"$t/ssh/sshd_config" <<CONF
Port 2222
HostKey $t/ssh/host_key
AuthorizedKeysFile $t/ssh/authorized_keys
PidFile $t/ssh/sshd.pid
StrictModes no
UsePAM no
PasswordAuthentication no
KbdInteractiveAuthentication no
PermitRootLogin prohibit-password
LogLevel VERBOSE
SetEnv XDG_CACHE_HOME=$far/cache XDG_STATE_HOME=$far/state XDG_CONFIG_HOME=$far/config TMPDIR=$far/tmp SLURM_CONF=$SLURM_CONF PATH=$far/bin:$cluster/bin:/usr/sbin:/usr/bin:/sbin:/bin
CONF
mkdir -p /run/sshd  # sshd's privilege separation folder (empty; Debian's package makes it at boot)
netns_exec "$pfx" hub /usr/sbin/sshd -D -f "$t/ssh/sshd_config" -E "$t/ssh/sshd.log" &
sshd_pid=$!
cat >"$t/ssh/config" <<CONF
Host *
  IdentityFile $t/ssh/id
  IdentitiesOnly yes
  UserKnownHostsFile $t/ssh/known_hosts
  StrictHostKeyChecking yes
  ConnectTimeout 10
  LogLevel ERROR
CONF
cp "$HPCLAUNCH" "$t/launchers/hpclaunch-$(uname -m)"
laptop() {  # the laptop's hpclaunch: in n2's namespace, from the laptop's folder (or $laptop_dir), without the cluster
  (cd "${laptop_dir:-$t/laptop}" && netns_exec "$pfx" n2 env -u SLURM_CONF HPCLAUNCH_SSH_CONFIG="$t/ssh/config" \
    XDG_RUNTIME_DIR="$run_dir" HPCLAUNCH_REMOTE_LAUNCHERS="${launchers:-$t/launchers}" "$HPCLAUNCH" "$@")
}
far_hl() { XDG_STATE_HOME=$far/state XDG_CACHE_HOME=$far/cache "$HPCLAUNCH" "$@"; }  # the far side, read directly
logins() { grep -c "Accepted publickey" "$t/ssh/sshd.log" || true; }
remote=root@hub:2222
wait_until 30 "sshd to listen in the hub namespace" 'netns_exec "$pfx" n2 bash -c "echo >/dev/tcp/hub/2222"'

# Bad input: one line, non-zero, nothing run.
rc=0; out=$(laptop status --remote '-oProxyCommand=touch /tmp/x' 1 2>&1) || rc=$?
assert_eq 2 "$rc" "exit status of a bad --remote"
assert_eq 1 "$(echo "$out" | wc -l)" "lines for a bad --remote ($out)"
assert_contains "$out" "hpclaunch: error: --remote: '-oProxyCommand=touch /tmp/x' is no ssh target: the host"
rc=0; out=$(laptop jobs --remote 2>&1) || rc=$?
assert_eq 2 "$rc" "exit status of --remote without a value"
assert_contains "$out" "--remote: needs a value"
rc=0; out=$(laptop jobs --remote root@n1:2222 2>&1) || rc=$?
assert_eq 1 "$rc" "exit status for a host without sshd"
assert_eq 1 "$(echo "$out" | wc -l)" "lines for an unreachable host ($out)"
assert_contains "$out" "hpclaunch: error: --remote root@n1:2222: cannot reach it to ask its architecture: ssh: connect to host n1 port 2222: Connection refused"
assert_eq 0 "$(logins)" "logins before the first command"

# The far side has an older launcher; with none for its architecture here, one line says how to get one.
mkdir -p "$far/cache/hpclaunch/bin" "$t/no-launchers"
printf '#!/bin/sh\necho "hpclaunch 0.0.1 (commit old)"\n' >"$far/cache/hpclaunch/bin/hpclaunch"
chmod 755 "$far/cache/hpclaunch/bin/hpclaunch"
rc=0; out=$(launchers=$t/no-launchers laptop jobs --remote "$remote" 2>&1) || rc=$?
assert_eq 2 "$rc" "exit status without a launcher to copy"
assert_eq 1 "$(echo "$out" | wc -l)" "lines without a launcher to copy ($out)"
assert_contains "$out" "hpclaunch: error: --remote: the far side is $(uname -m) and has no hpclaunch of this version, and there is no $(uname -m) launcher here to copy there; build the static one (docs/install.md, \"The static binary\"; for aarch64 as t0725 does) and put it at $t/no-launchers/hpclaunch-$(uname -m)"

# The first command copies the launcher over the older one; the laptop has no jobs of its own.
out=$(laptop jobs --remote "$remote" 2>"$t/err") || fail "jobs --remote failed: $(cat "$t/err")"
assert_contains "$(cat "$t/err")" "hpclaunch: copied $t/launchers/hpclaunch-$(uname -m) ($(uname -m)) to $remote:~/.cache/hpclaunch/bin/hpclaunch (it had hpclaunch 0.0.1 (commit old))"
assert_contains "$(laptop jobs 2>&1)" "hpclaunch: no jobs submitted from this machine yet" "the laptop's own jobs"
cmp "$HPCLAUNCH" "$far/cache/hpclaunch/bin/hpclaunch" || fail "the far launcher is not the laptop's"
assert_eq "$("$HPCLAUNCH" --version)" "$("$far/cache/hpclaunch/bin/hpclaunch" --version)" "far launcher's version"

# submit: the site file goes along; the job id comes back on stdout, the job is the far side's.
submit_far() {  # JOBDIR-NAME ARG...: submit from the laptop
  laptop submit --remote "$remote" --site test-perlmutter \
    --site-file "$HPCLAUNCH_SOURCE_DIR/tests/integration/sites/test-perlmutter.yaml" --account m1234_g \
    --job-dir "$far/jobs/$1" --nodes 1 --gpus-per-node 1 --launcher srun "${@:2}"
}
id=$(submit_far ok -- bash -c 'echo "hello from $(hostname)"; sleep 3' 2>"$t/err") || fail "submit --remote failed: $(cat "$t/err")"
[[ $id =~ ^[0-9]+$ ]] || fail "submit --remote printed '$id', not a job id ($(cat "$t/err"))"
echo "$id" >>"$t/submitted"
assert_not_contains "$(cat "$t/err")" "copied" "submit's stderr (the launcher is there now)"
assert_contains "$(cat "$t/err")" "hpclaunch: submitted job $id to test-perlmutter; job directory $far/jobs/ok"
assert_file "$far/jobs/ok/job.json"
assert_eq "" "$(ls "$t/laptop")" "what the laptop's folder holds after submit"
assert_eq "" "$(ls "$far/cache/hpclaunch/remote" 2>/dev/null)" "call folders left on the far side"

out=$(laptop render --remote "$remote" --site test-perlmutter --account m1234_g \
  --site-file "$HPCLAUNCH_SOURCE_DIR/tests/integration/sites/test-perlmutter.yaml" -- true) || fail "render --remote failed"
assert_contains "$out" "#SBATCH --account=m1234_g" "render --remote"
assert_contains "$out" "$far/cache/hpclaunch/bin/hpclaunch" "render --remote: the script runs the far launcher"
out=$(laptop jobs --remote "$remote") || fail "jobs --remote failed"
assert_contains "$(echo "$out" | grep "^$id ")" "test-perlmutter"
# README's --remote line, as written but for its login node (this test's in place of alice@login.example.org).
mapfile -t lines < <(python3 "$HPCLAUNCH_SOURCE_DIR/tests/tools/doc_commands.py" "$HPCLAUNCH_SOURCE_DIR" --run-by t0660)
assert_eq 1 "${#lines[@]}" "command lines README.md marks 'run by t0660'"
[[ ${lines[0]} == "hpclaunch "*alice@login.example.org* ]] || fail "README's line is not an hpclaunch line to alice@login.example.org: ${lines[0]}"
read -ra words <<<"${lines[0]/alice@login.example.org/$remote}"
out=$(laptop "${words[@]:1}") || fail "README's line failed: ${lines[0]}"
assert_contains "$(echo "$out" | grep "^$id ")" "test-perlmutter" "README's jobs --remote line"
out=$(laptop status --remote "$remote" --json "$id") || fail "status --remote --json failed"
assert_eq "\"$id\"" "$(echo "$out" | jq -c .job_id)" "status --json's job id"
assert_eq "\"$far/jobs/ok\"" "$(echo "$out" | jq -c .dir)" "status --json's job directory (the far side's)"
out=$(laptop wait --remote "$remote" --interval 0.5 "$id") ||
  fail "wait --remote exited $? for a job that should complete: $out"
assert_eq "$id COMPLETED" "$(echo "$out" | tail -n 1)" "wait's last line"
out=$(laptop logs --remote "$remote" "$id") || fail "logs --remote failed"
assert_contains "$out" "hello from n" "logs --remote"
out=$(laptop report --remote "$remote" "$id" -o page.html) || fail "report --remote -o failed: $out"
assert_eq "page.html" "$out" "report --remote -o's line"
assert_file "$t/laptop/page.html"
assert_contains "$(cat "$t/laptop/page.html")" "<html" "the page brought back"
assert_contains "$(cat "$t/laptop/page.html")" "$id" "the page brought back"

# cancel, and a far exit status that comes back: wait exits 1 for a cancelled job, as it does there.
id_long=$(submit_far long -- bash -c 'sleep 300' 2>/dev/null) || fail "submit --remote (long) failed"
echo "$id_long" >>"$t/submitted"
laptop cancel --remote "$remote" "$id_long" 2>/dev/null || fail "cancel --remote failed"
rc=0; laptop wait --remote "$remote" --interval 0.5 "$id_long" >/dev/null 2>&1 || rc=$?
assert_eq 1 "$rc" "wait --remote's exit status for a cancelled job"
assert_contains "$(laptop status --remote "$remote" "$id_long")" "$id_long CANCELLED"
rc=0; laptop status --remote "$remote" no-such-job >/dev/null 2>"$t/err" || rc=$?
rc_there=0; far_hl status no-such-job >/dev/null 2>"$t/err-there" || rc_there=$?
assert_eq "$rc_there" "$rc" "exit status of a bad job id, there and from the laptop"
assert_eq "$(cat "$t/err-there")" "$(cat "$t/err")" "error of a bad job id, there and from the laptop"
# submit --snapshot --remote: the laptop's code as it is now (a git tree with an uncommitted change, submitted from
# a folder in it) goes with the job and runs there; job.json names the laptop's commit, the change and the place
# (the laptop is n2: its namespace's host name).
code=$t/code
mkdir -p "$code/sub"
git -C "$code" init -q
echo 'echo "code v1"' >"$code/sub/run.sh"
git -C "$code" add sub/run.sh
git -C "$code" -c user.name=t -c user.email=t@example.org commit -qm v1
echo 'echo "code v1, edited on the laptop"' >"$code/sub/run.sh"
id_snap=$(laptop_dir=$code/sub submit_far snap --snapshot -- bash run.sh 2>"$t/err") || fail "submit --remote --snapshot failed: $(cat "$t/err")"
echo "$id_snap" >>"$t/submitted"
echo 'echo "code v2"' >"$code/sub/run.sh"  # after the submit: the job must not see it
laptop wait --remote "$remote" --interval 0.5 "$id_snap" >/dev/null 2>&1 || fail "the snapshot job failed: $(cat "$far/jobs/snap/slurm-$id_snap.out")"
assert_eq "0: code v1, edited on the laptop" "$(cat "$far/jobs/snap/slurm-$id_snap.out")" "what the snapshot job ran"
assert_eq "\"$(git -C "$code" rev-parse HEAD)\" true \"n2:$code\" \"$far/jobs/snap/snapshot/sub\"" \
  "$(jq -c '.snapshot.commit, .snapshot.dirty, .snapshot.source, .snapshot.workdir' "$far/jobs/snap/job.json" | paste -sd ' ')" \
  "job.json's snapshot: the laptop's commit, the change, where and from which folder"
assert_eq "" "$(ls "$far/cache/hpclaunch/remote" 2>/dev/null)" "call folders left on the far side after the snapshot"
rc=0; out=$(laptop submit --remote "$remote" --snapshot-exclude data/ -- true 2>&1) || rc=$?
assert_eq "2 hpclaunch: error: --snapshot-exclude: given without --snapshot; add --snapshot, or drop it" "$rc $out" \
  "a snapshot option without --snapshot"
rc=0; out=$(laptop_dir=$code submit_far bad-size --snapshot --snapshot-max-size lots -- true 2>&1) || rc=$?
assert_eq "2 hpclaunch: error: --snapshot-max-size: 'lots' is not a size; give one such as 512M or 2G (K, M, G, T: powers of 1024)" \
  "$rc $out" "a bad --snapshot-max-size with --remote (read on the laptop, as submit reads it)"
mkdir -p "$t/empty"
rc=0; out=$(laptop_dir=$t/empty submit_far empty --snapshot -- true 2>&1) || rc=$?
assert_eq "2 hpclaunch: error: --snapshot: no files to copy from $t/empty; submit from the code's folder" "$rc $out" \
  "a snapshot of an empty folder with --remote"
[ ! -e "$far/jobs/bad-size" ] && [ ! -e "$far/jobs/empty" ] || fail "a refused snapshot left a far job directory"
assert_eq 1 "$(logins)" "logins for all the commands above (one shared connection)"

# The connection killed while the far submit runs sbatch: the laptop asks again with the same token and gets the
# same job; the scheduler has exactly one.
touch "$t/slow"
jobs_before=$(wc -l <"$far/state/hpclaunch/jobs")
name=lost-${t##*.}  # this run's own: the scheduler still lists an earlier run's job for a while
submit_far lost -J "$name" -- sleep 120 >"$t/lost.out" 2>"$t/lost.err" &
submit_pid=$!
wait_until 60 "the far sbatch to start" '[ -e "$t/sbatch-started" ]'
master=$(pgrep -f "^ssh: $run_dir/hpclaunch-ssh/.* \[mux\]") || fail "no ssh master for $run_dir"
kill "$master"
rc=0; wait "$submit_pid" || rc=$?
assert_eq 0 "$rc" "exit status of the submit whose connection was lost ($(cat "$t/lost.err"))"
id_lost=$(cat "$t/lost.out")
[[ $id_lost =~ ^[0-9]+$ ]] || fail "the retried submit printed '$id_lost', not a job id ($(cat "$t/lost.err"))"
echo "$id_lost" >>"$t/submitted"
assert_contains "$(cat "$t/lost.err")" "the connection to $remote was lost during submit; asking again with the same submit token"
assert_eq "$id_lost" "$(squeue -h -t all -n "$name" -o %i)" "the scheduler's jobs named $name"
assert_eq $((jobs_before + 1)) "$(wc -l <"$far/state/hpclaunch/jobs")" "far job index lines after the lost submit"
assert_eq 2 "$(logins)" "logins (the second after the lost connection)"

# One prompt for a whole session: a key with a passphrase, no terminal (as under CTest, or from an editor's task),
# and an askpass program (SSH_ASKPASS_REQUIRE=force, a DISPLAY) that logs each question and answers it. submit,
# status, wait, logs and cancel over --remote ask once; a session in another control folder (no master to share)
# asks again. Its control folders are under $run_dir: the cleanup ends their masters too.
pass=t0660-${t##*.}
ssh-keygen -q -t ed25519 -N "$pass" -f "$t/ssh/id_pass"
cat "$t/ssh/id_pass.pub" >>"$t/ssh/authorized_keys"
sed "s|IdentityFile $t/ssh/id\$|IdentityFile $t/ssh/id_pass|" "$t/ssh/config" >"$t/ssh/config_pass"
grep -qx "  IdentityFile $t/ssh/id_pass" "$t/ssh/config_pass" || fail "config_pass does not name the passphrase key"
cat >"$t/askpass" <<SH
#!/bin/sh
echo "\$1" >>$t/askpass.log
echo "$pass"
SH
chmod 755 "$t/askpass"
mkdir -m 700 "$run_dir/one" "$run_dir/two"
laptop_pass() {  # SESSION COMMAND ARG...: `COMMAND --remote` from the laptop with the passphrase key and askpass,
  # SESSION's control folder, and no terminal (setsid: none when the test is run by hand either)
  local session=$1 command=$2
  shift 2
  (cd "$t/laptop" && netns_exec "$pfx" n2 setsid -w env -u SLURM_CONF HPCLAUNCH_SSH_CONFIG="$t/ssh/config_pass" \
    XDG_RUNTIME_DIR="$run_dir/$session" HPCLAUNCH_REMOTE_LAUNCHERS="$t/launchers" SSH_ASKPASS="$t/askpass" \
    SSH_ASKPASS_REQUIRE=force DISPLAY=:0 "$HPCLAUNCH" "$command" --remote "$remote" "$@" </dev/null)
}
asked() { if [ -f "$t/askpass.log" ]; then grep -c . "$t/askpass.log" || true; else echo 0; fi; }
logins_before=$(logins) pass_start=$SECONDS
id_p=$(laptop_pass one submit --site test-perlmutter --site-file "$HPCLAUNCH_SOURCE_DIR/tests/integration/sites/test-perlmutter.yaml" \
  --account m1234_g --job-dir "$far/jobs/pass" --nodes 1 --gpus-per-node 1 --launcher srun -- echo "one prompt" 2>"$t/err") ||
  fail "submit --remote with a passphrase key and askpass failed (asked $(asked) times): $(cat "$t/err")"
echo "$id_p" >>"$t/submitted"
assert_contains "$(laptop_pass one status "$id_p")" "$id_p " "status over the session"
laptop_pass one wait --interval 0.5 "$id_p" >/dev/null || fail "wait over the session failed"
assert_contains "$(laptop_pass one logs "$id_p")" "one prompt" "logs over the session"
laptop_pass one cancel "$id_p" 2>/dev/null || fail "cancel over the session failed"  # ended already: scancel says nothing
assert_eq 1 "$(asked)" "askpass runs for submit, status, wait, logs and cancel over one connection ($(cat "$t/askpass.log"))"
assert_contains "$(cat "$t/askpass.log")" "$t/ssh/id_pass" "what askpass was asked"
assert_eq $((logins_before + 1)) "$(logins)" "logins of the session"
laptop_pass two jobs >/dev/null || fail "jobs --remote in a second control folder failed"
assert_eq 2 "$(asked)" "askpass runs for a session in another control folder (no connection to share)"
assert_eq $((logins_before + 2)) "$(logins)" "logins of the two sessions"
note "askpass asked once per session ($((SECONDS - pass_start)) s): $(head -n 1 "$t/askpass.log")"
echo "ok"
