#!/usr/bin/env bash
# Hangs of hpclaunch-train, a C++ worker (docs/agent.md, "Hangs"): bench/soak/soak.py's hang_stop faults SIGSTOP a
# random worker of the auto-encoder under two `hpclaunch agent`s (2 emulated nodes x 2 workers) run with
# --hang-timeout 8. Each hang must be found (the trainer writes its steps to HPCLAUNCH_PROGRESS_FILE), its stacks
# recorded with eu-stack, and the group restarted from its checkpoint; the run must end with latest.pt bit for bit the
# unfaulted run's. No timing is asserted.
source "$(dirname "$0")/lib.sh"
need_hpclaunch
need_cmd eu-stack
[ -n "${HPCLAUNCH_TRAIN:-}" ] || skip "HPCLAUNCH_TRAIN unset (hpclaunch-train not built)"
seed=${HPCLAUNCH_SOAK_SEED:-1}
rc=0
python3 "$HPCLAUNCH_SOURCE_DIR/bench/soak/soak.py" --hpclaunch "$HPCLAUNCH" --train "$HPCLAUNCH_TRAIN" \
  --work "$test_tmp/soak" --seed "$seed" --faults 3 --steps 200 --timeout 500 --kinds hang_stop --hang-timeout 8 \
  >"$test_tmp/summary" 2>"$test_tmp/err" || rc=$?
cat "$test_tmp/summary"
[ $rc = 0 ] || fail "hang soak (seed $seed) failed: $(cat "$test_tmp/err")"
hit=$(python3 -c 'import json,sys; s=json.load(open(sys.argv[1])); print(s["faults"] - s["missed"])' "$test_tmp/soak/summary.json")
assert_eq 3 "$hit" "hangs that hit the run (seed $seed)"
grep -q '"bit_identical": true' "$test_tmp/summary" || fail "not bit-identical (seed $seed)"
logs=$(cat "$test_tmp"/soak/job.*.agent*.log)
# Every hang found is this node's stopped worker, named with its frame in the trainer's own source (eu-stack).
found=$(grep -c "hang: rank [0-3] (local rank [01]) on node[01] made no progress for .*, in [a-z_]*\.cc:[0-9]" <<<"$logs" || true)
[ "$found" -ge 3 ] || fail "$found of 3 hangs reported with a frame in the trainer's source: $(grep 'hang' <<<"$logs")"
while read -r rank; do
  assert_contains "$logs" "hang: rank $rank (local rank $((rank % 2))) on node$((rank / 2)) made no progress" \
    "the stopped worker (rank $rank) is the one blamed on its node"
done < <(python3 -c 'import json,sys; [print(json.loads(l)["rank"]) for l in open(sys.argv[1])]' "$test_tmp/soak/faults.jsonl")
echo ok
