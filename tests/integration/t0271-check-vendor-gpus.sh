#!/usr/bin/env bash
# t0271: `hpclaunch check` counts an AMD or Intel node's GPUs as its vendor's runtime sees them, not as torch.cuda
# does (no Level Zero device is a CUDA device, and a CPU build sees none): one rank over gloo with --expect-gpus
# as the profiles give it (Aurora: 12 tiles; LUMI-G and Frontier: 8 GCDs). This machine has no GPU, so the devices
# are those the job's variables list; the rules on recorded sysfs layouts are unit tests (runtime_node_devices).
source "$(dirname "$0")/lib.sh"
source "$(dirname "$0")/lib-port.sh"
need_hpclaunch
[ -n "${HPCLAUNCH_TRAIN:-}" ] || skip "built without LibTorch: no hpclaunch-probe"
if [ -e /sys/class/drm ] || [ -e /sys/class/kfd ]; then
  skip "this machine's own GPUs (/sys/class/drm, /sys/class/kfd) would be counted, not the made-up lists"
fi
check() {  # EXPECTED-GPUS VAR=VALUE...: one rank's check; its report in $test_tmp/report.json
  local expect=$1
  shift
  rm -f "$test_tmp/report.json"
  env -u CUDA_VISIBLE_DEVICES -u HPCLAUNCH_NODE_GPUS "$@" RANK=0 LOCAL_RANK=0 WORLD_SIZE=1 LOCAL_WORLD_SIZE=1 \
    MASTER_ADDR=127.0.0.1 MASTER_PORT="$(free_port)" HPCLAUNCH_NODENAME=n1 \
    timeout 120 "$HPCLAUNCH" check --max-bytes 64 --expect-gpus "$expect" --json "$test_tmp/report.json" \
    >"$test_tmp/out" 2>"$test_tmp/err"
}
gpus() { grep -o '"gpus": [0-9]*' "$test_tmp/report.json" | grep -o '[0-9]*$'; }

check 12 HPCLAUNCH_ACCELERATOR=intel ZE_FLAT_DEVICE_HIERARCHY=FLAT ZE_AFFINITY_MASK=0,1,2,3,4,5,6,7,8,9,10,11 ||
  fail "Intel, 12 tiles listed: $(cat "$test_tmp/out" "$test_tmp/err")"
assert_eq 12 "$(gpus)" "Intel: the node's GPUs in the report"

check 8 HPCLAUNCH_ACCELERATOR=amd ROCR_VISIBLE_DEVICES=0,1,2,3,4,5,6,7 ||
  fail "AMD, 8 GCDs listed: $(cat "$test_tmp/out" "$test_tmp/err")"
assert_eq 8 "$(gpus)" "AMD: the node's GPUs in the report"

rc=0
check 12 HPCLAUNCH_ACCELERATOR=intel ZE_AFFINITY_MASK=0,1,2,3,4,5,6,7,8,9,10 || rc=$?
assert_eq 1 "$rc" "Intel, 11 tiles for 12 expected: the check's exit code"
assert_contains "$(cat "$test_tmp/out")" "BAD: 11 GPU(s), expected 12" "Intel, a tile short"

# NVIDIA as before: a CPU build counts CUDA_VISIBLE_DEVICES.
check 4 CUDA_VISIBLE_DEVICES=0,1,2,3 || fail "NVIDIA, 4 listed: $(cat "$test_tmp/out" "$test_tmp/err")"
assert_eq 4 "$(gpus)" "NVIDIA (CPU build): CUDA_VISIBLE_DEVICES"

# A report that cannot be written: one line naming the report's path (not a temporary file's), exit 1.
rc=0
RANK=0 LOCAL_RANK=0 WORLD_SIZE=1 LOCAL_WORLD_SIZE=1 MASTER_ADDR=127.0.0.1 MASTER_PORT="$(free_port)" timeout 120 \
  "$(dirname "$HPCLAUNCH_TRAIN")/hpclaunch-probe" --max-bytes 64 --json "$test_tmp/none/report.json" \
  >/dev/null 2>"$test_tmp/err" || rc=$?
assert_eq 1 "$rc" "the probe's exit code when its report cannot be written"
assert_eq "hpclaunch-probe: error: $test_tmp/none/report.json: cannot write the preflight report (creating its temporary file .report.json.tmp.PID: No such file or directory); check the job directory" \
  "$(sed -E 's/\.tmp\.[0-9]+:/.tmp.PID:/' "$test_tmp/err")" "the probe's error when its report cannot be written"
note "ok: Intel 12 tiles and AMD 8 GCDs counted from their variables; a missing tile is a bad node; NVIDIA unchanged"
