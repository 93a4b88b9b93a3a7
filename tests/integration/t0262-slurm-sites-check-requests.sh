#!/usr/bin/env bash
# `hpclaunch sites check` on the live test cluster (nodes with RealMemory 250000 MB = 244 GB): a profile that
# says 256 GB a node but asks --mem=0 (full nodes) or a GPU's share is not failed; one whose jobs ask more
# memory than the nodes have is; the rendered request, not the stated fact, decides.
source "$(dirname "$0")/lib.sh"
need_hpclaunch
need_cluster
sites=$HPCLAUNCH_SOURCE_DIR/tests/integration/sites
cd "$test_tmp"

out=$("$HPCLAUNCH" sites check test-shaped-256 --site-file "$sites/test-shaped.yaml" --site-file "$sites/test-shaped-256.yaml" \
  2>"$test_tmp/err") || fail "a profile whose jobs fit was failed: $out $(cat "$test_tmp/err")"
assert_not_contains "$out" "FAIL"
assert_contains "$out" "set node.memory_gb to at most 244 (the scheduler's RealMemory); the jobs ask --mem=0, --mem-per-gpu=64G, which fits"
assert_contains "$(grep '^node.memory_gb' <<<"$out")" "WARN"

# The jobs it renders are what the check judged: sbatch --test-only takes a 3-GPU one (--mem-per-gpu=64G).
"$HPCLAUNCH" submit --site test-shaped-256 --site-file "$sites/test-shaped.yaml" --site-file "$sites/test-shaped-256.yaml" \
  --check --gpus-per-node 3 --nodes 1 --time 5 --job-dir "$test_tmp/three" -- true >"$test_tmp/three.id" 2>"$test_tmp/three.err" \
  || fail "a 3-GPU job of the profile was refused: $(cat "$test_tmp/three.err")"
assert_contains "$(cat "$test_tmp/three/job.sh")" "#SBATCH --mem-per-gpu=64G"
scancel "$(cat "$test_tmp/three.id")" 2>/dev/null || true

# Jobs that ask 4 x 80G = 320G of a 244G node: FAIL, exit 1, the directive named.
cat >"$test_tmp/test-shaped-80g.yaml" <<'YAML'
name: test-shaped-80g
extends: test-shaped-256
memory: {request: per-gpu, amount: 80G}
YAML
rc=0
out=$("$HPCLAUNCH" sites check test-shaped-80g --site-file "$sites/test-shaped.yaml" --site-file "$sites/test-shaped-256.yaml" \
  --site-file "$test_tmp/test-shaped-80g.yaml" 2>/dev/null) || rc=$?
assert_eq 1 "$rc" "exit status of a check whose jobs ask too much memory"
assert_contains "$(grep '^node.memory_gb' <<<"$out")" "FAIL"
assert_contains "$out" "jobs ask --mem-per-gpu=80G with 4 GPU(s) (327680 MB a node), more than the nodes' RealMemory 250000 MB"
echo ok
