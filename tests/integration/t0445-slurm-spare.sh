#!/usr/bin/env bash
# A spare on the real test cluster: `submit --nodes 1 --spares 1` asks for both nodes (#SBATCH --no-kill), srun
# --no-kill starts an agent on each, n2's waits holding no workers while hpclaunch-train runs on n1. Then the
# spare's agent is SIGKILLed: its task ends 137, the step and the job go on (--no-kill), and the job ends
# COMPLETED with exit 0, node 0's agent's status (JOBDIR/agent-exit), not srun's 137. `status` lists the spare
# while it waits.
# (The test cluster has two nodes: a spare taking a lost node's place is proved on three netns hosts, t0484, and
# on the local site, t0232.)
source "$(dirname "$0")/lib.sh"
need_hpclaunch
need_cluster
[ -x "${HPCLAUNCH_TRAIN:-}" ] || skip "hpclaunch-train was not built (no LibTorch)"
cd "$test_tmp"
d=$test_tmp/job
id=$(submit_test_site test-perlmutter "$d" --account m1234_g --nodes 1 --spares 1 --gpus-per-node 1 \
  --launcher agent --env HPCLAUNCH_TRAIN_STEP_SLEEP_MS=100 -- "$HPCLAUNCH_TRAIN" --model autoencoder --synthetic \
  --synthetic-samples 2048 --global-batch-size 64 --epochs 1000 --steps 200 --threads 1 --log-every 50 \
  --no-validation --checkpoint-dir "$test_tmp/ck" --checkpoint-every 20)
script=$(cat "$d/job.sh")
assert_contains "$script" "#SBATCH --nodes=2" "the allocation holds the spare"
assert_contains "$script" "#SBATCH --no-kill" "the script"
assert_contains "$script" "srun --no-kill --nodes=2 " "the script"
wait_until 120 "the spare to wait" 'grep -q "a spare: this node waits in the rendezvous" "$d/slurm-$id.out" 2>/dev/null'
wait_until 30 "nodes.json to list the spare" 'grep -q "n2 (node 1)" "$d/nodes.json" 2>/dev/null'
assert_contains "$("$HPCLAUNCH" status "$d")" "spare: n2 (node 1)" "status while the spare waits"
spare=""
for p in $(pgrep -x hpclaunch); do
  env=$(tr '\0' '\n' 2>/dev/null <"/proc/$p/environ") || continue
  tr '\0' ' ' 2>/dev/null <"/proc/$p/cmdline" | grep -q "hpclaunch agent " || continue
  # The agent, not its orphan guard (a fork of it, process/orphan_guard.h).
  ! tr '\0' ' ' 2>/dev/null <"/proc/$(ps -o ppid= "$p" | tr -d ' ')/cmdline" | grep -q "^[^ ]*hpclaunch agent " || continue
  grep -qx "SLURM_JOB_ID=$id" <<<"$env" && grep -qx "SLURM_NODEID=1" <<<"$env" && spare=$p
done
[ -n "$spare" ] || fail "no agent of node 1 in job $id: $(cat "$d/slurm-$id.out")"
kill -KILL "$spare"
wait_until 30 "the store to hear of it" 'grep -q "lost the agent on n2 (node 1)" "$d/slurm-$id.out"'
state=$(wait_job "$id" 300)
out=$(cat "$d/slurm-$id.out")
assert_eq COMPLETED "$state" "the job whose spare was killed (output: $out)"
assert_eq 0 "$(cat "$d/agent-exit")" "node 0's agent's status"
assert_contains "$out" "lost the agent on n2 (node 1)" "the store"
assert_contains "$(cat "$test_tmp/ck/metrics.jsonl" 2>/dev/null; ls "$test_tmp/ck")" "latest.pt" "the training's checkpoint"
assert_not_contains "$("$HPCLAUNCH" status "$d")" "replaced:" "status (nothing was replaced)"
echo ok
