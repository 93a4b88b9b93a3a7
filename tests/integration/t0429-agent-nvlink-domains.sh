#!/usr/bin/env bash
# NVLink domains order the group ranks: four agents on loopback (emulated nodes n0-n3, one worker each), whose
# domains (HPCLAUNCH_NVLINK_DOMAIN, as a test or a site's prolog sets it; on a GB200 node read from `nvidia-smi -q`)
# alternate between two racks as the scheduler's node order has them: n0 A, n1 B, n2 A, n3 B. The ranks of rack A
# come first (0, 1), then rack B's (2, 3); node 0 keeps rank 0; without domains the ranks follow the node ranks.
source "$(dirname "$0")/lib.sh"
need_hpclaunch

export HPCLAUNCH_RDZV_SECRET=0123456789abcdef
worker=$test_tmp/worker.sh
cat >"$worker" <<'EOF2'
#!/bin/sh
echo "$HPCLAUNCH_NODENAME $RANK $GROUP_RANK $WORLD_SIZE" >"$OUT/rank.$HPCLAUNCH_NODENAME"
EOF2
chmod +x "$worker"

run_job() {  # run_job OUTDIR DOMAIN0 DOMAIN1 DOMAIN2 DOMAIN3
  local out=$1 port pids=()
  shift
  mkdir -p "$out"
  port=$(free_port)
  for i in 0 1 2 3; do
    local domain=$1
    shift
    env OUT="$out" HPCLAUNCH_LOCAL_JOB=1 HPCLAUNCH_JOB_ID=local-t0429 "HPCLAUNCH_NODELIST=n[0-3]" HPCLAUNCH_NNODES=4 \
      HPCLAUNCH_NODE_RANK=$i HPCLAUNCH_NODENAME=n$i HPCLAUNCH_MASTER_ADDR_RULE=fixed HPCLAUNCH_MASTER_ADDR_FIXED=127.0.0.1 \
      HPCLAUNCH_MASTER_PORT="$port" HPCLAUNCH_NVLINK_DOMAIN="$domain" \
      timeout 60 "$HPCLAUNCH" agent --nproc-per-node 1 -- "$worker" >"$out/agent.$i" 2>&1 &
    pids+=($!)
  done
  for p in "${pids[@]}"; do wait "$p" || fail "an agent failed: $(cat "$out"/agent.*)"; done
}

run_job "$test_tmp/racks" rack-A rack-B rack-A rack-B
assert_eq "n0 0 0 4" "$(cat "$test_tmp/racks/rank.n0")" "node 0 (rack A)"
assert_eq "n2 1 1 4" "$(cat "$test_tmp/racks/rank.n2")" "node 2 (rack A) comes next"
assert_eq "n1 2 2 4" "$(cat "$test_tmp/racks/rank.n1")" "node 1 (rack B) after rack A"
assert_eq "n3 3 3 4" "$(cat "$test_tmp/racks/rank.n3")" "node 3 (rack B)"

run_job "$test_tmp/none" "" "" "" ""
for i in 0 1 2 3; do assert_eq "n$i $i $i 4" "$(cat "$test_tmp/none/rank.n$i")" "node $i without domains"; done
