#!/usr/bin/env bash
# scripts/test-cluster.sh's netns mode itself, on its own directory: each node answers `hostname` with its name
# and has its own address; the machine's own namespace (links, addresses, routes, /etc/hosts) is the same before,
# during and after; start is idempotent; stop leaves no namespace, no /etc/netns file, no daemon.
source "$(dirname "$0")/lib.sh"
need_cmd slurmctld slurmd sinfo ip
[ "$(id -u)" = 0 ] || skip "needs root (ip netns)"
tc=$HPCLAUNCH_SOURCE_DIR/scripts/test-cluster.sh
dir=$test_tmp/cluster
trap 'rc=$?; "$tc" stop "$dir" >/dev/null 2>&1 || true; _lib_cleanup $rc' EXIT
# What the cluster could leave in the machine's own namespace: links of its prefix, addresses, routes or /etc/hosts
# lines in its range (only these: tests running beside this one may add their own).
pfx=hl$(printf '%s' "$dir" | md5sum | cut -c1-6)  # the script's prefix for DIR
machine() { { ip -o link show; ip -o addr show; ip route show; cat /etc/hosts; } | grep -E "$pfx|198\.18\.77\." || true; }
before=$(machine)
assert_eq "" "$before" "the cluster's links, addresses, routes and /etc/hosts lines before start"

TEST_CLUSTER_NETNS=1 "$tc" start "$dir" 2>"$test_tmp/start.err" || fail "start: $(cat "$test_tmp/start.err")"
assert_contains "$(cat "$test_tmp/start.err")" "namespaces $pfx-{hub,n1,n2}" "start's message"
assert_eq "$pfx-hub $pfx-n1 $pfx-n2" "$(ip netns list | awk '{print $1}' | grep "^$pfx-" | sort | xargs)" "namespaces"
assert_eq "$before" "$(machine)" "the machine's own links, addresses, routes and /etc/hosts while it runs"
"$tc" start "$dir" 2>"$test_tmp/start2.err" || fail "second start: $(cat "$test_tmp/start2.err")"
assert_contains "$(cat "$test_tmp/start2.err")" "already running"
"$tc" status "$dir" >/dev/null || fail "status says it is down"
(
  source "$dir/env.sh"
  timeout 60 srun -N2 --ntasks-per-node=1 sh -c 'echo "$SLURMD_NODENAME $(hostname) $(ip -4 -o addr show eth0 | awk "{print \$4}")"' \
    >"$test_tmp/hosts.out" 2>&1
) || fail "srun on the netns cluster: $(cat "$test_tmp/hosts.out")"
assert_eq "n1 n1 198.18.77.1/24
n2 n2 198.18.77.2/24" "$(sort "$test_tmp/hosts.out")" "host names and addresses of the nodes"

"$tc" stop "$dir" || fail "stop failed"
assert_eq "" "$(ip netns list | grep "^$pfx-" || true)" "namespaces left after stop"
assert_eq "" "$(ls -d /etc/netns/"$pfx"-* 2>/dev/null || true)" "/etc/netns files left after stop"
assert_eq "$before" "$(machine)" "the machine's own links, addresses, routes and /etc/hosts after stop"
"$tc" status "$dir" 2>/dev/null && fail "status says it is up after stop"
[ ! -e "$dir/netns" ] || fail "$dir/netns left after stop"
left=$(pgrep -af -- "-f $dir/slurm.conf" || true)
[ -z "$left" ] || fail "daemons left: $left"
