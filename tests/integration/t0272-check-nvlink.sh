#!/usr/bin/env bash
# t0272: `hpclaunch check`'s multi-node NVLink preflight, one line per failing node: a GPU not registered with the
# fabric, the IMEX channel missing, a node outside its segment's NVLink domain (--segment 2). Two ranks over gloo
# play the nodes n1 and n2. This machine has no NVIDIA GPU, so a stand-in `nvidia-smi` (first on PATH) prints an
# answer of tests/unit/data/nvidia-smi (the GB200 ones are made in a recorded answer's layout: see the README
# there), and HPCLAUNCH_IMEX_CHANNEL names a file for the channel device; the rules are unit tests
# (nvlink_fabric, probe_report). The speed probe is out of it (--slow-factor 1000): both ranks share this machine.
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

# check ANSWER1 ANSWER2 CHANNEL2 ARGS...: n1 and n2 with these answers (files; n1's channel is there); the report in
# $test_tmp/out, the exit code in $rc.
check() {
  local a1=$1 a2=$2 ch2=$3 port pids=()
  shift 3
  port=$(free_port)
  for r in 0 1; do
    local answer=$a1 channel=$test_tmp/channel0
    [ $r = 1 ] && answer=$a2 channel=$ch2
    env -u CUDA_VISIBLE_DEVICES PATH="$test_tmp/bin:$PATH" T0272_ANSWER="$answer" HPCLAUNCH_IMEX_CHANNEL="$channel" \
      RANK=$r LOCAL_RANK=0 WORLD_SIZE=2 LOCAL_WORLD_SIZE=1 MASTER_ADDR=127.0.0.1 MASTER_PORT="$port" \
      HPCLAUNCH_NODENAME=n$((r + 1)) timeout 120 "$HPCLAUNCH" check --max-bytes 64 --slow-factor 1000 --json "$test_tmp/report.$r.json" "$@" \
      >"$test_tmp/out.$r" 2>&1 &
    pids+=($!)
  done
  rc=0
  wait "${pids[0]}" || rc=$?
  wait "${pids[1]}" || true
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
