#!/usr/bin/env bash
# The workers of hpclaunch agent get the same variables as those of the real torchrun (python3-torch) for the
# same layout: 2 agents x 2 workers on loopback, same run id and max restarts, from the same clean environment.
# Differences allowed by design (docs/agent.md): MASTER_ADDR (the rendezvous host, not the node's FQDN),
# MASTER_PORT (both free ports), TORCHELASTIC_ERROR_FILE (both per-worker paths), PYTHONUNBUFFERED (added),
# OMP_NUM_THREADS (cores per worker, where torchrun sets 1). Then a worker that raises under torch's @record
# writes TORCHELASTIC_ERROR_FILE, and the agent's root-cause summary shows the exception and its traceback.
source "$(dirname "$0")/lib.sh"
need_hpclaunch
py=/usr/bin/python3
$py -c 'import torch.distributed.run' 2>/dev/null || fail "$py has no torch; run scripts/install-deps.sh (python3-torch)"

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
    --rdzv_endpoint 127.0.0.1:$port --rdzv_id envcmp --max_restarts 2 --redirects 1 --tee 1 \
    --log_dir "$test_tmp/logs/$i" "$test_tmp/dump.py" "$test_tmp/torchrun" >"$test_tmp/torchrun$i.out" 2>&1 &
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
$py - "$test_tmp" <<'EOF2' || { show_outputs; fail "environments differ (see above)"; }
import json, os, sys
tmp = sys.argv[1]
allowed_values = {"MASTER_ADDR", "MASTER_PORT", "TORCHELASTIC_ERROR_FILE"}
allowed_extra = {"PYTHONUNBUFFERED", "TORCH_NCCL_ASYNC_ERROR_HANDLING"}  # the latter: torchrun 2.x's name (1.13 sets the old one)
ok = True
for rank in range(4):
    try:
        ref = json.load(open(f"{tmp}/torchrun/{rank}.json"))
        got = json.load(open(f"{tmp}/hpclaunch/{rank}.json"))
    except OSError as e:
        print(f"rank {rank}: {e}"); ok = False; continue
    missing = set(ref) - set(got)
    extra = set(got) - set(ref) - allowed_extra
    if missing: print(f"rank {rank}: torchrun sets {sorted(missing)}, hpclaunch does not"); ok = False
    if extra: print(f"rank {rank}: hpclaunch sets {sorted(extra)}, torchrun does not"); ok = False
    for k in sorted(set(ref) & set(got) - allowed_values):
        if k in ("GROUP_RANK",):  # torchrun gives node ranks in join order; compare through RANK below
            continue
        # torchrun sets 1; hpclaunch the cores per worker (the same on a 2-core machine).
        if k == "OMP_NUM_THREADS" and got[k] == str(max(1, len(os.sched_getaffinity(0)) // 2)):
            continue
        if ref[k] != got[k]:
            print(f"rank {rank}: {k}: torchrun '{ref[k]}', hpclaunch '{got[k]}'"); ok = False
    if int(got["GROUP_RANK"]) != rank // 2: print(f"rank {rank}: GROUP_RANK {got['GROUP_RANK']}"); ok = False
    if int(ref["GROUP_RANK"]) != int(ref["RANK"]) // 2: print(f"torchrun rank {rank}: GROUP_RANK off"); ok = False
    for k in ("MASTER_ADDR", "MASTER_PORT", "TORCHELASTIC_ERROR_FILE"):
        if not got.get(k): print(f"rank {rank}: {k} empty"); ok = False
    print(f"rank {rank}: {len(ref)} variables compared")
sys.exit(0 if ok else 1)
EOF2

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
