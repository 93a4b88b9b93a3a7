#!/usr/bin/env bash
# `hpclaunch sites check`, `sites learn` and `submit --check` against the live test cluster, which has a site's
# shape (typed GRES, features, partitions with limits; no accounting database: accounts are 'unknown').
source "$(dirname "$0")/lib.sh"
need_hpclaunch
need_cluster
sites=$HPCLAUNCH_SOURCE_DIR/tests/integration/sites
cd "$test_tmp"

# A profile true to the cluster: exit 0, every fact found.
out=$("$HPCLAUNCH" sites check test-shaped --site-file "$sites/test-shaped.yaml" 2>"$test_tmp/err") \
  || fail "check of a matching profile failed: $out $(cat "$test_tmp/err")"
assert_contains "$out" "partition shaped max_time"
assert_not_contains "$out" "FAIL"
assert_contains "$(cat "$test_tmp/err")" "no mismatch that fails a job"

# A profile with wrong facts: exit 1, each named with its fix.
rc=0
out=$("$HPCLAUNCH" sites check test-shaped-wrong --site-file "$sites/test-shaped.yaml" --site-file "$sites/test-shaped-wrong.yaml" 2>/dev/null) || rc=$?
assert_eq 1 "$rc" "exit status of a check with mismatches"
for want in "set max_time of queue shaped to 04:00:00" "partition gpularge" "gpu_request.type" "feature hbm80g"; do
  assert_contains "$out" "$want"
done
json=$("$HPCLAUNCH" sites check test-shaped-wrong --json --site-file "$sites/test-shaped.yaml" --site-file "$sites/test-shaped-wrong.yaml" 2>/dev/null) || true
assert_eq "False 0" "$(echo "$json" | python3 -c 'import json, sys; d = json.load(sys.stdin); print(d["ok"], 0)')" "--json's verdict"
# A built-in profile against a cluster that is not its site: a mismatch, never a crash.
rc=0
"$HPCLAUNCH" sites check narvi >/dev/null 2>&1 || rc=$?
assert_eq 1 "$rc" "narvi's profile against the test cluster"

# Learn a profile from the cluster; it loads, checks clean, and a job rendered from it runs there.
"$HPCLAUNCH" sites learn testc -o "$test_tmp/testc.yaml" 2>"$test_tmp/learn.err" || fail "learn failed: $(cat "$test_tmp/learn.err")"
assert_contains "$(cat "$test_tmp/testc.yaml")" "learned:"
assert_contains "$(cat "$test_tmp/testc.yaml")" "type: a100"
assert_fails "exists" "$HPCLAUNCH" sites learn testc -o "$test_tmp/testc.yaml"
"$HPCLAUNCH" sites check testc --site-file "$test_tmp/testc.yaml" >/dev/null 2>&1 || fail "a learned profile does not check clean"
id=$("$HPCLAUNCH" submit --site testc --site-file "$test_tmp/testc.yaml" --partition shaped --nodes 2 --time 10 \
  --job-dir "$test_tmp/learned" -- bash -c 'echo "rank $RANK of $WORLD_SIZE"' 2>"$test_tmp/submit.err") \
  || fail "submit with the learned profile failed: $(cat "$test_tmp/submit.err")"
assert_contains "$(cat "$test_tmp/submit.err")" "--check: sbatch: Job"  # learned profiles validate first
assert_eq COMPLETED "$(wait_job "$id" 120)" "the learned profile's job (output: $(cat "$test_tmp/learned/slurm-$id.out" 2>/dev/null))"
assert_eq "8" "$(grep -c '] rank [0-7] of 8$' "$test_tmp/learned/slurm-$id.out")" "ranks of the learned profile's job"

# --check: a request the profile cannot know is wrong (a feature the nodes lack) is refused by sbatch --test-only
# in its own words, and nothing is submitted or left behind.
before=$(squeue -h -o %i | wc -l)
assert_fails "--check: the scheduler would refuse the job" "$HPCLAUNCH" submit --site test-shaped --site-file "$sites/test-shaped.yaml" \
  --check --constraint nosuchfeature --nodes 1 --job-dir "$test_tmp/refused" -- true
[ ! -e "$test_tmp/refused" ] || fail "a refused --check left $test_tmp/refused"
assert_eq "$before" "$(squeue -h -o %i | wc -l)" "jobs queued after a refused --check"
echo ok
