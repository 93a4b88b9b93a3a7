#!/usr/bin/env bash
# `hpclaunch check` as a job's command on the test cluster (2 nodes x 4 agent workers, gloo): every node shows the
# 4 GPUs Slurm gave it (CUDA_VISIBLE_DEVICES from the fake GRES), the allreduce sweep runs, preflight.json lands in
# the job directory. Then test hooks (no real fault can be put on one emulated node here: a fake, said so) make n2
# report 3 GPUs, or n1 slow: the check names that node and the job fails.
source "$(dirname "$0")/lib.sh"
need_hpclaunch
need_cluster
[ -n "${HPCLAUNCH_TRAIN:-}" ] || skip "built without LibTorch: no hpclaunch-probe"
sites=$HPCLAUNCH_SOURCE_DIR/tests/integration/sites
cd "$test_tmp"
check() {  # JOBDIR ENV...: submits the preflight, prints the job id
  local dir=$1
  shift
  local envs=()
  for e in "$@"; do envs+=(--env "$e"); done
  "$HPCLAUNCH" submit --site test-shaped --site-file "$sites/test-shaped.yaml" --nodes 2 --time 10 --job-dir "$dir" \
    "${envs[@]}" -- "$HPCLAUNCH" check --max-bytes 65536 --expect-gpus 4 2>/dev/null
}

# The healthy and missing-GPU runs take a large slow factor: other tests share these 2 cores, and a rank delayed
# by them is not a slow node. The slow-node run keeps the default (2) against the hook's 0.5 s.
id=$(check "$test_tmp/ok" HPCLAUNCH_CHECK_SLOW_FACTOR=100) || fail "submit failed"
assert_eq COMPLETED "$(wait_job "$id" 180)" "healthy preflight (output: $(cat "$test_tmp/ok/slurm-$id.out" 2>/dev/null))"
out=$(cat "$test_tmp/ok/slurm-$id.out")
assert_contains "$out" "busbw(GB/s)"
assert_contains "$out" "65536"
report=$(python3 -c 'import json, sys; d = json.load(open(sys.argv[1])); print(d["ok"], d["world_size"], sorted(n["node"] for n in d["nodes"]), [n["gpus"] for n in d["nodes"]])' "$test_tmp/ok/preflight.json") \
  || fail "no preflight.json in the job directory"
assert_eq "True 8 ['n1', 'n2'] [4, 4]" "$report" "preflight.json"

id=$(check "$test_tmp/gpus" HPCLAUNCH_PROBE_TEST_GPUS=n2=3 HPCLAUNCH_CHECK_SLOW_FACTOR=100) || fail "submit failed"
assert_eq FAILED "$(wait_job "$id" 180)" "preflight with a node missing a GPU"
assert_contains "$(cat "$test_tmp/gpus/slurm-$id.out")" "bad node(s): n2"
assert_contains "$(cat "$test_tmp/gpus/slurm-$id.out")" "3 GPU(s), expected 4"
assert_eq "['n2']" "$(python3 -c 'import json, sys; print(json.load(open(sys.argv[1]))["bad_nodes"])' "$test_tmp/gpus/preflight.json")"

id=$(check "$test_tmp/slow" HPCLAUNCH_PROBE_TEST_SLOW_NODE=n1) || fail "submit failed"
assert_eq FAILED "$(wait_job "$id" 180)" "preflight with a slow node"
assert_contains "$(cat "$test_tmp/slow/slurm-$id.out")" "bad node(s): n1"
assert_contains "$(cat "$test_tmp/slow/slurm-$id.out")" "slower than the median node"
echo ok
