#!/usr/bin/env bash
# t0272: `hpclaunch check`'s multi-node NVLink preflight, one line per failing node: a GPU not registered with the
# fabric, the IMEX channel missing, a node outside its segment's NVLink domain (--segment 2). Two ranks over gloo
# play the nodes n1 and n2. This machine has no NVIDIA GPU, so a stand-in `nvidia-smi` (first on PATH) prints an
# answer of tests/unit/data/nvidia-smi (the GB200 ones are made in a recorded answer's layout: see the README
# there), and HPCLAUNCH_IMEX_CHANNEL names a file for the channel device; the rules are unit tests
# (nvlink_fabric, probe_report). The speed probe is out of it (--slow-factor 1000): both ranks share this machine.
# Then the bandwidth inside each NVLink domain and across domains (rails), with two ranks a node: gloo over
# loopback measures the groups (no NVLink here), so the test holds the groups, the report and the verdict against
# the figures, not the speed.
source "$(dirname "$0")/lib.sh"
source "$(dirname "$0")/lib-port.sh"
need_hpclaunch
[ -n "${HPCLAUNCH_TRAIN:-}" ] || skip "built without LibTorch: no hpclaunch-probe"
data=$HPCLAUNCH_SOURCE_DIR/tests/unit/data/nvidia-smi
mkdir -p "$test_tmp/bin"
cat >"$test_tmp/bin/nvidia-smi" <<'EOF2'
#!/bin/sh
# The stand-in: `nvidia-smi -q` prints the answer this emulated node was given.
[ "$1" = -q ] && exec cat "$T0272_ANSWER"
exit 2
EOF2
chmod +x "$test_tmp/bin/nvidia-smi"
: >"$test_tmp/channel0"

# check ANSWER1 ANSWER2 CHANNEL2 ARGS...: n1 and n2 with these answers (files; n1's channel is there), $ppn ranks a
# node (default 1); rank 0's output in $test_tmp/out, its report in $test_tmp/report.0.json, the exit code in $rc.
check() {
  local a1=$1 a2=$2 ch2=$3 port pids=() per=${ppn:-1}
  shift 3
  port=$(free_port)
  for ((r = 0; r < 2 * per; r++)); do
    local answer=$a1 channel=$test_tmp/channel0 node=$((r / per + 1))
    [ $node = 2 ] && answer=$a2 channel=$ch2
    env -u CUDA_VISIBLE_DEVICES PATH="$test_tmp/bin:$PATH" T0272_ANSWER="$answer" HPCLAUNCH_IMEX_CHANNEL="$channel" \
      RANK=$r LOCAL_RANK=$((r % per)) WORLD_SIZE=$((2 * per)) LOCAL_WORLD_SIZE=$per MASTER_ADDR=127.0.0.1 MASTER_PORT="$port" \
      HPCLAUNCH_NODENAME=n$node timeout 120 "$HPCLAUNCH" check --max-bytes 64 --slow-factor 1000 --json "$test_tmp/report.$r.json" "$@" \
      >"$test_tmp/out.$r" 2>&1 &
    pids+=($!)
  done
  rc=0
  wait "${pids[0]}" || rc=$?
  for p in "${pids[@]:1}"; do wait "$p" || true; done
  cat "$test_tmp/out.0" >"$test_tmp/out"
}

check "$data/gb200-tray.txt" "$data/gb200-tray.txt" "$test_tmp/channel0" --segment 2
assert_eq 0 "$rc" "two nodes of one rack, registered, channels there: $(cat "$test_tmp/out")"

check "$data/gb200-tray.txt" "$data/gb200-not-registered.txt" "$test_tmp/channel0"
assert_eq 1 "$rc" "a GPU of n2 not registered"
assert_contains "$(cat "$test_tmp/out")" "GPU 00000008:02:00.0: NVLink fabric state In Progress, status N/A"
assert_contains "$(cat "$test_tmp/out")" "bad node(s): n2"

check "$data/gb200-tray.txt" "$data/gb200-tray.txt" "$test_tmp/no-such-channel"
assert_eq 1 "$rc" "n2's IMEX channel missing"
assert_contains "$(cat "$test_tmp/out")" "IMEX channel $test_tmp/no-such-channel is missing"

# n2 in another rack than n1 (its ClusterUUID differs): fine without a segment, bad with --segment 2.
sed 's/50000000-0000-0000-0000-000000000004/50000000-0000-0000-0000-000000000009/' "$data/gb200-tray.txt" >"$test_tmp/other-rack.txt"
check "$data/gb200-tray.txt" "$test_tmp/other-rack.txt" "$test_tmp/channel0"
assert_eq 0 "$rc" "two racks, no segment asked: $(cat "$test_tmp/out")"
check "$data/gb200-tray.txt" "$test_tmp/other-rack.txt" "$test_tmp/channel0" --segment 2
assert_eq 1 "$rc" "two racks in one segment of 2"
assert_contains "$(cat "$test_tmp/out")" "NVLink domain 50000000-0000-0000-0000-000000000009/4000000005, not its segment's"
note "ok: unregistered GPU, missing IMEX channel and a node outside its segment's domain are bad nodes, one line each"

# Bandwidth inside and across NVLink domains, two ranks a node. One rack: ranks 0-3 in one group inside it, nothing
# across. Two racks: each node's two ranks inside its rack, and rails 0 (ranks 0, 2) and 1 (ranks 1, 3) across.
# A figure no loopback reaches is flagged as a warning (the job goes on: exit 0); a tiny one is not.
json() { python3 -c "import json,sys; r=json.load(open('$test_tmp/report.0.json')); print($1)"; }
ppn=2 check "$data/gb200-tray.txt" "$data/gb200-tray.txt" "$test_tmp/channel0" --expect-nvlink-busbw 0.000001
assert_eq 0 "$rc" "one rack, four ranks: $(cat "$test_tmp/out")"
assert_eq "[[0, 1, 2, 3]] 0" "$(json "str([g['ranks'] for g in r['nvlink_domains']]) + ' ' + str(len(r['across_domains']))")" "one group inside the rack"
assert_eq "True" "$(json "r['nvlink_domains'][0]['busbw_gbs'] > 0 and r['nvlink_domains'][0]['nodes'] == ['n1', 'n2']")" "its busbw measured"
assert_not_contains "$(cat "$test_tmp/out")" "warning"
ppn=2 check "$data/gb200-tray.txt" "$data/gb200-tray.txt" "$test_tmp/channel0" --expect-nvlink-busbw 100000
assert_eq 0 "$rc" "a slow domain is a warning, not a bad node: $(cat "$test_tmp/out")"
assert_contains "$(cat "$test_tmp/out")" "hpclaunch-probe: warning: NVLink domain 50000000-0000-0000-0000-000000000004/4000000005 (n1, n2): busbw"
assert_contains "$(cat "$test_tmp/out")" "below half the 100000 GB/s it gives"
assert_eq "1" "$(json "len(r['domain_shortfalls'])")" "the shortfall in the report"

ppn=2 check "$data/gb200-tray.txt" "$test_tmp/other-rack.txt" "$test_tmp/channel0" --expect-busbw 100000 --expect-nvlink-busbw 0.000001
assert_eq 0 "$rc" "two racks, four ranks: $(cat "$test_tmp/out")"
assert_eq "[[0, 1], [2, 3]]" "$(json "[g['ranks'] for g in r['nvlink_domains']]")" "a group inside each rack"
assert_eq "[[0, 2], [1, 3]]" "$(json "[g['ranks'] for g in r['across_domains']]")" "the rails across the racks"
assert_eq "['rail 0', 'rail 1']" "$(json "[g['name'] for g in r['across_domains']]")" "named as rails"
assert_contains "$(cat "$test_tmp/out")" "# across NVLink domains"
assert_contains "$(cat "$test_tmp/out")" "hpclaunch-probe: warning: across NVLink domains: busbw"
assert_not_contains "$(cat "$test_tmp/out")" "warning: NVLink domain"
note "ok: busbw inside each NVLink domain and across domains measured in groups, and flagged against the figures"
