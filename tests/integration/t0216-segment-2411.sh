#!/usr/bin/env bash
# Block topology on a real Slurm 24.11 (Debian 13's, from scripts/slurm-root.sh's root): a cluster of its own with
# four nodes in two blocks (topology/block: b1 = n[1-2], b2 = n[3-4]).
# 1. `submit --segment 2 --nodes 2` with n2 drained lands on a whole block, n[3-4], never on n1 and a node of b2.
# 2. `--segment 2 --nodes 4` with the agent: every node runs; the NVLink domains a stand-in `nvidia-smi` gives the
#    nodes (this machine has no NVIDIA GPU; the answers are tests/unit/data/nvidia-smi's GB200 tray, its
#    ClusterUUID set per node) interleave with the node names, n1 and n3 in rack A, n2 and n4 in rack B, as when a
#    site's node names do not follow its racks: the agent's ranks keep each rack contiguous: n1 0, n3 1, n2 2, n4 3.
# 3. A node count that is no multiple of the segment is refused before anything is submitted.
source "$(dirname "$0")/lib.sh"
need_hpclaunch
tc=$HPCLAUNCH_SOURCE_DIR/scripts/test-cluster.sh
dir=$test_tmp/cluster
trap 'rc=$?; "$tc" stop "$dir" >/dev/null 2>&1 || true; _lib_cleanup $rc' EXIT
TEST_CLUSTER_SLURM=24.11 TEST_CLUSTER_NODES=4 "$tc" start "$dir" 2>"$test_tmp/start.err" ||
  fail "the 24.11 cluster did not start (scripts/slurm-root.sh makes its root once): $(cat "$test_tmp/start.err")"
export HPCLAUNCH_CLUSTER_DIR=$dir
# shellcheck disable=SC1091
source "$dir/env.sh"
assert_contains "$(scontrol show topology)" "BlockName=b2" "the cluster's topology"
cat >"$test_tmp/site.yaml" <<'EOF2'
name: test-blocks
extends: test-perlmutter
title: the 24.11 test cluster, block topology
scheduler_version: "24.11"
EOF2
submit() { "$HPCLAUNCH" submit --site test-blocks --site-file "$HPCLAUNCH_SOURCE_DIR/tests/integration/sites/test-perlmutter.yaml" \
  --site-file "$test_tmp/site.yaml" --account m1234_g "$@"; }

# 1. A whole block, with n2 drained.
scontrol update nodename=n2 state=drain reason=t0216
id=$(submit --job-dir "$test_tmp/one" --nodes 2 --segment 2 --gpus-per-node 1 -- sh -c 'echo "node=$SLURMD_NODENAME"')
assert_contains "$(cat "$test_tmp/one/job.sh")" "#SBATCH --segment=2" "the script"
assert_eq COMPLETED "$(wait_job "$id" 120)" "the segment job (output: $(cat "$test_tmp/one"/slurm-*.out 2>/dev/null))"
assert_eq "node=n3 node=n4" "$(grep -o 'node=n[0-9]' "$test_tmp/one"/slurm-*.out | sort -u | xargs)" \
  "the nodes of a --segment 2 job with n2 drained"
scontrol update nodename=n2 state=resume

# 2. Four nodes, ranks by NVLink domain.
mkdir -p "$test_tmp/bin" "$test_tmp/ranks"
cat >"$test_tmp/bin/nvidia-smi" <<EOF2
#!/bin/sh
# The stand-in: a GB200 tray's answer, its rack by node: n1 and n3 in A (...0a), n2 and n4 in B (...0b).
[ "\$1" = -q ] || exit 2
case \$SLURMD_NODENAME in n1 | n3) rack=0a ;; *) rack=0b ;; esac
sed "s/50000000-0000-0000-0000-000000000004/50000000-0000-0000-0000-0000000000\$rack/" "$HPCLAUNCH_SOURCE_DIR/tests/unit/data/nvidia-smi/gb200-tray.txt"
EOF2
chmod +x "$test_tmp/bin/nvidia-smi"
cat >"$test_tmp/worker.sh" <<EOF2
#!/bin/sh
echo "\$RANK" >"$test_tmp/ranks/\$SLURMD_NODENAME"
EOF2
chmod +x "$test_tmp/worker.sh"
id=$(PATH="$test_tmp/bin:$PATH" submit --job-dir "$test_tmp/four" --nodes 4 --segment 2 --gpus-per-node 1 \
  --launcher agent -- "$test_tmp/worker.sh")
assert_eq COMPLETED "$(wait_job "$id" 180)" "the 4-node segment job (output: $(cat "$test_tmp/four"/slurm-*.out 2>/dev/null))"
assert_eq "0 1 2 3" "$(cat "$test_tmp/ranks/n1" "$test_tmp/ranks/n3" "$test_tmp/ranks/n2" "$test_tmp/ranks/n4" | xargs)" \
  "the ranks of n1 n3 (rack A) n2 n4 (rack B)"

# 3. Three nodes in segments of 2: one line, nothing submitted.
rc=0
err=$(submit --job-dir "$test_tmp/three" --nodes 3 --segment 2 -- hostname 2>&1) || rc=$?
assert_eq 2 "$rc" "the exit code for 3 nodes in segments of 2 ($err)"
assert_eq "hpclaunch: error: --segment: 3 node(s) are not a multiple of the segment size 2; use --nodes 2 or 4, or a --segment that divides 3" "$err"
[ ! -e "$test_tmp/three" ] || fail "a job directory was written for the refused job"
note "ok: a --segment 2 job on a whole block; ranks by NVLink domain under Slurm 24.11; 3 nodes refused"
