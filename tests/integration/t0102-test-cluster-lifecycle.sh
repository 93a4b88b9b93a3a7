#!/usr/bin/env bash
# scripts/test-cluster.sh itself, on its own directory (it takes a free port block, so it runs beside the
# fixture's cluster): start is idempotent, status tells up from down, stop leaves no daemon of this directory
# and touches no other cluster.
source "$(dirname "$0")/lib.sh"
need_cmd slurmctld slurmd sinfo
tc=$HPCLAUNCH_SOURCE_DIR/scripts/test-cluster.sh
dir=$test_tmp/cluster
other=$test_tmp/other
trap 'rc=$?; "$tc" stop "$dir" >/dev/null 2>&1 || true; "$tc" stop "$other" >/dev/null 2>&1 || true; _lib_cleanup $rc' EXIT

"$tc" start "$dir" 2>"$test_tmp/start1.err" || fail "start: $(cat "$test_tmp/start1.err")"
assert_contains "$(cat "$test_tmp/start1.err")" "up in $dir"
assert_file "$dir/env.sh"
assert_eq "export SLURM_CONF=$dir/slurm.conf" "$(grep SLURM_CONF "$dir/env.sh")" "env.sh"
[ -c "$dir/fakegpu3" ] || fail "fake GPU $dir/fakegpu3 is not a character device"
grep -Eq '^127\.0\.1\.1[[:space:]]+n1' /etc/hosts || fail "/etc/hosts has no '127.0.1.1 n1'"
assert_eq "n1 idle
n2 idle" "$(SLURM_CONF=$dir/slurm.conf sinfo -h -N -p debug -o '%N %t' | sort -u)" "sinfo after start"

"$tc" start "$dir" 2>"$test_tmp/start2.err" || fail "second start: $(cat "$test_tmp/start2.err")"
assert_contains "$(cat "$test_tmp/start2.err")" "already running in $dir"
"$tc" status "$dir" >/dev/null || fail "status says down while it is up"
[ "$(pgrep -fc -- "-f $dir/slurm.conf")" = 3 ] || fail "expected 3 daemons of $dir, found: $(pgrep -af -- "-f $dir/slurm.conf")"

# A second cluster beside it (the next free port block) must survive the first one's stop.
"$tc" start "$other" 2>/dev/null || fail "a second cluster beside the first did not start"
[ "$(grep SlurmctldPort "$dir/slurm.conf")" != "$(grep SlurmctldPort "$other/slurm.conf")" ] \
  || fail "two clusters got the same port: $(grep SlurmctldPort "$dir/slurm.conf")"
"$tc" stop "$dir" || fail "stop failed"
[ -z "$(pgrep -f -- "-f $dir/slurm.conf" || true)" ] || fail "daemons left after stop: $(pgrep -af -- "-f $dir/slurm.conf")"
"$tc" stop "$dir" || fail "second stop failed"
rc=0; "$tc" status "$dir" 2>/dev/null || rc=$?
assert_eq 1 "$rc" "status after stop"
"$tc" status "$other" >/dev/null || fail "stopping $dir stopped the cluster in $other too"
"$tc" stop "$other" || fail "stop of the second cluster failed"
