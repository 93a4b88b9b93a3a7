#!/usr/bin/env bash
# The fault soak on the real Slurm test cluster, in short (bench/soak/README.md, "On the Slurm test cluster"):
# hpclaunch-train's auto-encoder as one `submit --launcher agent --requeue` job (2 nodes x 2 workers, the agents given
# restarts by PET_MAX_RESTARTS), hit 6 times by soak.py's seeded driver: a worker SIGKILLed, rank 0 killed as it writes
# its checkpoint, `scancel --signal=USR1 --batch` (twice) and `scontrol requeue`. It must end COMPLETED with latest.pt
# bit for bit the unfaulted run's, every step once, one job index row and no process left. Seed 12 draws all four kinds.
# First, a warning must reach an agent's worker once. The warnings must come back as requeues after exit 99 (agents with
# restarts left used to restart their workers in place instead). No timing is asserted.
source "$(dirname "$0")/lib.sh"
need_hpclaunch
[ -n "${HPCLAUNCH_TRAIN:-}" ] || skip "HPCLAUNCH_TRAIN unset (hpclaunch-train not built)"
need_cluster
cd "$test_tmp"

# 1. The warning reaches an agent's worker once: srun passes the script's SIGUSR1 to the step, and slurmstepd
#    signals every process of it, the workers included; the agent must not pass it on again (hpclaunch-train dies
#    at a second warning). A task counts what reaches it.
d=$test_tmp/once
id=$(submit_test_site test-shaped "$d" --nodes 1 --gpus-per-node 1 --time 10 --requeue --launcher agent -- \
  bash -c 'n=0; trap "n=\$((n + 1))" USR1; echo started; for _ in $(seq 40); do sleep 0.25; done; echo "warnings: $n"' \
  2>/dev/null) || fail "submit failed"
id=$(grep -o '[0-9]*' <<<"$id" | tail -n 1)
wait_until --every 0.5 --on-timeout "scancel $id" 60 "the worker to start" 'grep started "$d/slurm-$id.out"'
scancel --signal=USR1 --batch "$id"
assert_eq COMPLETED "$(wait_job "$id" 120)" "state of the warned agent job"
out=$(cat "$d/slurm-$id.out")
assert_contains "$out" "warnings: 1" "what reached the worker (output: $out)"
assert_contains "$out" "got SIGUSR1: the Slurm step gave it to the workers too; not passed on again"

# 2. The soak.
seed=${HPCLAUNCH_SOAK_SEED:-12}
rc=0
python3 "$HPCLAUNCH_SOURCE_DIR/bench/soak/soak.py" --hpclaunch "$HPCLAUNCH" --train "$HPCLAUNCH_TRAIN" \
  --work "$test_tmp/soak" --slurm "$HPCLAUNCH_CLUSTER_DIR" --seed "$seed" --faults 6 --steps 300 --timeout 400 \
  >"$test_tmp/summary" 2>"$test_tmp/err" || rc=$?
cat "$test_tmp/summary"
[ $rc = 0 ] || fail "Slurm soak (seed $seed) failed: $(cat "$test_tmp/err")"
field() { python3 -c 'import json,sys; s=json.load(open(sys.argv[1])); print(eval(sys.argv[2], {}, s))' \
  "$test_tmp/soak/summary.json" "$1"; }
assert_eq True "$(field 'bit_identical')" "bit-identical (seed $seed)"
assert_eq COMPLETED "$(field 'slurm_state')" "the job's end"
[ "$(field 'faults - missed')" -ge 4 ] || fail "only $(field 'faults - missed') faults hit the job (seed $seed)"
usr1=$(grep -c '"kind": "preempt_usr1"' "$test_tmp/soak/faults.jsonl" || true)
if [ "$usr1" -gt 0 ]; then
  out=$(cat "$test_tmp"/soak/job/slurm-*.out)
  assert_contains "$out" "after exit 99" "the job's output (a warning must requeue it)"
fi
echo "ok"
