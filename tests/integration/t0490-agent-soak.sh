#!/usr/bin/env bash
# The fault soak in short (bench/soak/README.md): hpclaunch-train's auto-encoder under two `hpclaunch agent`s (2
# emulated nodes x 2 workers, restarts allowed), hit by bench/soak/soak.py's seeded fault driver at least 10
# times (worker, agent and store-agent SIGKILL, USR1 and TERM preemption, a requeue, a kill during a checkpoint
# write, the job directory's disk full), must end with latest.pt byte for byte the unfaulted run's, every step
# once in valid JSON lines, and no process left. The driver restarts a job whose agents ended (a requeue, as
# Slurm's --requeue would). No timing is asserted; the seed is printed so a failure replays.
source "$(dirname "$0")/lib.sh"
need_hpclaunch
[ -n "${HPCLAUNCH_TRAIN:-}" ] || skip "HPCLAUNCH_TRAIN unset (hpclaunch-train not built)"
seed=${HPCLAUNCH_SOAK_SEED:-1}
rc=0
python3 "$HPCLAUNCH_SOURCE_DIR/bench/soak/soak.py" --hpclaunch "$HPCLAUNCH" --train "$HPCLAUNCH_TRAIN" \
  --work "$test_tmp/soak" --seed "$seed" --faults 14 --steps 300 --timeout 500 >"$test_tmp/summary" 2>"$test_tmp/err" ||
  rc=$?
cat "$test_tmp/summary"
[ $rc = 0 ] || fail "soak (seed $seed) failed: $(cat "$test_tmp/err")"
faults=$(python3 -c 'import json,sys; s=json.load(open(sys.argv[1])); print(s["faults"] - s["missed"])' "$test_tmp/soak/summary.json")
[ "$faults" -ge 10 ] || fail "only $faults faults hit the run (seed $seed)"
grep -q '"bit_identical": true' "$test_tmp/summary" || fail "not bit-identical (seed $seed)"
echo "ok"
