#!/usr/bin/env bash
# `submit --spares` on the embedded local site: `--nodes 2 --spares 1` runs three emulated nodes (node0-node2),
# an agent on each; node2 waits holding no workers. hpclaunch-train (gloo, checkpoints every 5 steps) is hit at
# step 10 or later, in two jobs:
# - the agent of node1 is SIGKILLed: the spare takes node1's place as group rank 1, no restart is used;
# - node1's worker is stopped (SIGSTOP, a hang that never ends) with --hang-timeout 3: the stacks are recorded,
#   node1 is blamed and retired, and the spare takes its place in the restart (one of PET_MAX_RESTARTS=1);
# each ends 0 with weights bit-identical to an unfaulted `--nodes 2` run (`hpclaunch-train compare --tolerance 0`),
# and `hpclaunch status` names the spare that took the place and why.
source "$(dirname "$0")/lib.sh"
need_hpclaunch
[ -x "${HPCLAUNCH_TRAIN:-}" ] || skip "hpclaunch-train was not built (no LibTorch)"
for v in $(env | grep -oE '^(SLURM|PBS|PMI|OMPI_COMM|HPCLAUNCH_)[A-Z_]*' || true); do [ "$v" = HPCLAUNCH_TRAIN ] || unset "$v"; done
unset MASTER_ADDR MASTER_PORT
cd "$test_tmp"
steps=40
submit=("$HPCLAUNCH" submit --site local --nodes 2 --gpus-per-node 1 --launcher agent)
train() {  # CHECKPOINT_DIR
  echo "$HPCLAUNCH_TRAIN" --model autoencoder --synthetic --synthetic-samples 4096 --global-batch-size 192 \
    --epochs 100000 --steps $steps --threads 1 --log-every 1 --no-validation --checkpoint-dir "$1" \
    --checkpoint-every 5 --resume --metrics "$1/metrics.jsonl"
}
step_of() { { grep -o '"type":"step".*"step":[0-9]*' "$1" 2>/dev/null || true; } | sed 's/.*"step"://' | tail -n 1 | grep . || echo 0; }
# pid_of NODE_RANK NAME JOB_DIR: the process named NAME (hpclaunch: the agent; hpclaunch-train: the worker) of job
# JOB_DIR's emulated node NODE_RANK.
pid_of() {
  local p env
  for p in $(pgrep -x -- "$2"); do
    [ "$2" != hpclaunch ] || tr '\0' ' ' 2>/dev/null <"/proc/$p/cmdline" | grep -q "^[^ ]*hpclaunch agent " || continue
    # The agent, not its orphan guard (a fork of it, process/orphan_guard.h).
    [ "$2" != hpclaunch ] || ! tr '\0' ' ' 2>/dev/null <"/proc/$(ps -o ppid= "$p" | tr -d ' ')/cmdline" | grep -q "^[^ ]*hpclaunch agent " || continue
    env=$(tr '\0' '\n' 2>/dev/null <"/proc/$p/environ") || continue
    grep -qx "HPCLAUNCH_NODE_RANK=$1" <<<"$env" && grep -qx "HPCLAUNCH_JOB_DIR=$3" <<<"$env" && { echo "$p"; return 0; }
  done
  fail "no $2 of node $1 running in $3"
}
export HPCLAUNCH_TRAIN_STEP_SLEEP_MS=50

timeout 240 "${submit[@]}" --job-dir "$test_tmp/ref.job" -- $(train "$test_tmp/ref") >"$test_tmp/ref.out" 2>&1 \
  || fail "the unfaulted run: $(cat "$test_tmp/ref.out")"

# spare_job NAME FAULT WHY [FLAG...]: a job with one spare, node1 hit by FAULT (kill or stop) at step 10 or later,
# replaced for WHY.
spare_job() {
  local name=$1 fault=$2 why=$3 ck=$test_tmp/$1 job=$test_tmp/$1.job out status
  shift 3
  "${submit[@]}" --spares 1 --detach --job-dir "$job" "$@" -- $(train "$ck") >/dev/null 2>"$test_tmp/err" \
    || fail "submit --spares ($name): $(cat "$test_tmp/err")"
  wait_until 120 "step 10 ($name)" '[ "$(step_of "$ck/metrics.jsonl")" -ge 10 ]'
  case $fault in
    kill) kill -KILL "$(pid_of 1 hpclaunch "$job")" ;;
    stop) kill -STOP "$(pid_of 1 hpclaunch-train "$job")" ;;
  esac
  timeout 120 "$HPCLAUNCH" wait "$job" >/dev/null 2>&1 || fail "the job with a spare ($name): $(cat "$job/output.log")"
  out=$(cat "$job/output.log")
  assert_contains "$out" "a spare: this node waits in the rendezvous" "node2's agent ($name)"
  assert_contains "$out" "taking a place in round 1 as group rank 1" "node2's agent ($name)"
  status=$("$HPCLAUNCH" status "$job" 2>&1)
  assert_contains "$status" "replaced: round 1: node2 (node 2) took the place of node1 (node 1) as group rank 1: $why" \
    "status ($name)"
  assert_contains "$("$HPCLAUNCH_TRAIN" compare "$test_tmp/ref/latest.pt" "$ck/latest.pt" --tolerance 0)" ": same" \
    "the weights ($name) against the unfaulted run's"
  wait_until 10 "no process of the job left ($name)" '! pgrep -f "$ck" >/dev/null'
}

spare_job killed kill "its agent was lost" --env HPCLAUNCH_AGENT_VERBOSE=1
spare_job hung stop "it was blamed for a hang (rank 1)" --hang-timeout 3 --env PET_MAX_RESTARTS=1
assert_contains "$("$HPCLAUNCH" status "$test_tmp/hung.job" 2>&1)" "hang: attempt 0: rank 1 (local rank 0) on node1" \
  "status of the hung job"
assert_contains "$(cat "$test_tmp/hung.job/output.log")" "retired after the hang its rank was blamed for" "node1's agent"
