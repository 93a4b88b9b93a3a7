#!/usr/bin/env bash
# The workers of hpclaunch agent get the same variables as those of torchrun 2.15 (the peers' venv) for the same
# layout: 2 agents x 2 workers on loopback, same run id and max restarts, from the same clean environment. Each of
# torchrun's worker variables is compared by name (lib-torchrun-env.py, which lists the differences kept by
# design; their reasons are in docs/agent.md, "Deliberate differences"). Then a worker that
# raises under torch 2.15's @record writes TORCHELASTIC_ERROR_FILE, and the agent's root-cause summary shows the
# exception and its traceback, as torchrun 2.15's own summary of the same job does (rank, exit code, exception).
source "$(dirname "$0")/lib.sh"
need_hpclaunch
py=$(peer_python)

cat >"$test_tmp/dump.py" <<'EOF2'
import json, os, sys
with open(os.path.join(sys.argv[1], os.environ["RANK"] + ".json"), "w") as f:
    json.dump(dict(os.environ), f)
EOF2
clean_env=(env -i PATH=/usr/bin:/bin HOME="$test_tmp" HPCLAUNCH_PYTHON=$py)
mkdir -p "$test_tmp/torchrun" "$test_tmp/hpclaunch" "$test_tmp/logs"

port=$(free_port)
for i in 0 1; do
  "${clean_env[@]}" timeout 120 $py -m torch.distributed.run --nnodes 2 --nproc_per_node 2 --rdzv_backend c10d \
    --rdzv_endpoint 127.0.0.1:$port --rdzv_id envcmp --max_restarts 2 "$test_tmp/dump.py" "$test_tmp/torchrun" >"$test_tmp/torchrun$i.out" 2>&1 &
done
wait || true
port=$(free_port)
for i in 0 1; do
  "${clean_env[@]}" HPCLAUNCH_RDZV_SECRET=0ddba11 timeout 120 "$HPCLAUNCH" agent --nnodes 2 --node-rank $i --nproc-per-node 2 \
    --rdzv-endpoint 127.0.0.1:$port --rdzv-id envcmp --max-restarts 2 "$test_tmp/dump.py" "$test_tmp/hpclaunch" \
    >"$test_tmp/hpclaunch$i.out" 2>&1 &
done
wait || true

show_outputs() { for f in "$test_tmp"/torchrun?.out "$test_tmp"/hpclaunch?.out; do echo "--- $f"; tail -20 "$f"; done; }
$py "$HPCLAUNCH_SOURCE_DIR/tests/integration/lib-torchrun-env.py" "$test_tmp/torchrun" "$test_tmp/hpclaunch" 4 ||
  { show_outputs; fail "environments differ (see above)"; }

cat >"$test_tmp/raise.py" <<'EOF2'
import os
from torch.distributed.elastic.multiprocessing.errors import record

@record
def main():
    if os.environ["RANK"] == "1":
        raise ValueError("learning rate must be positive")

main()
EOF2
rc=0
out=$("${clean_env[@]}" timeout 120 "$HPCLAUNCH" agent --standalone --nproc-per-node 2 "$test_tmp/raise.py" 2>&1) || rc=$?
assert_eq 1 "$rc" "exit code of a job whose rank 1 raised ($out)"
assert_contains "$out" "root cause: rank 1 (local rank 1) on "
assert_contains "$out" "exited with code 1"
assert_contains "$out" "error file of rank 1:"
assert_contains "$out" "ValueError: learning rate must be positive"
assert_contains "$out" "Traceback"
# torchrun 2.15 names the same root cause from the same error file: its rank, exit code and the exception's last
# traceback line, which ours shows as well.
ref=$("${clean_env[@]}" timeout 120 $py -m torch.distributed.run --standalone --nproc-per-node 2 "$test_tmp/raise.py" 2>&1) &&
  fail "torchrun 2.15 succeeded with a raising rank: $ref"
root=$(sed -n '/^Root Cause/,/^=====/p' <<<"$ref")
assert_contains "$root" "rank      : 1 (local_rank: 1)" "torchrun 2.15's root cause (the reference)"
assert_contains "$root" "exitcode  : 1"
last=$(grep -E '^  [A-Za-z]+Error: ' <<<"$root" | tail -1 | sed 's/^ *//')
assert_eq "ValueError: learning rate must be positive" "$last" "the exception in torchrun 2.15's root cause"
assert_contains "$out" "$last" "our root cause shows the exception torchrun's does"
