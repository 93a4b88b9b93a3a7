#!/usr/bin/env bash
# Debian's torchrun (1.13) beside hpclaunch's torchrun face, same flags, same clean environment: the exit status of
# a job whose worker succeeds, exits 3, or is killed by SIGKILL; a worker that fails on the first attempt and
# succeeds on the restart (--max_restarts 1); and the workers' variables under --standalone --role trainer
# --nproc_per_node 2 --no_python (differences allowed by design as in t0420: MASTER_ADDR/PORT, error files,
# PYTHONUNBUFFERED, TORCH_NCCL_ASYNC_ERROR_HANDLING, OMP_NUM_THREADS).
source "$(dirname "$0")/lib.sh"
need_hpclaunch
py=/usr/bin/python3
$py -c 'import torch.distributed.run' 2>/dev/null || fail "$py has no torch; run scripts/install-deps.sh (python3-torch)"
cd "$test_tmp"
clean_env=(env -i PATH=/usr/bin:/bin HOME="$test_tmp" HPCLAUNCH_PYTHON=$py)
# Debian's torchrun 1.13 under Python 3.11 fails in its own to_map() unless --redirects/--tee name a stream: both
# get `--redirects 1 --tee 1 --log_dir DIR`, as in t0420.
logs=0
both() {  # ARG...: prints "torchrun=RC ours=RC"
  local a=0 b=0
  logs=$((logs + 1))
  "${clean_env[@]}" timeout 120 $py -m torch.distributed.run --redirects 1 --tee 1 --log_dir "$test_tmp/logs/ref$logs" "$@" \
    >"$test_tmp/ref.out" 2>&1 || a=$?
  "${clean_env[@]}" timeout 120 "$HPCLAUNCH" torchrun --redirects 1 --tee 1 --log_dir "$test_tmp/logs/our$logs" "$@" \
    >"$test_tmp/our.out" 2>&1 || b=$?
  echo "torchrun=$a ours=$b"
}
cat >ok.py <<'PY'
PY
printf 'import sys\nsys.exit(3)\n' >exit3.py
printf 'import os, signal\nos.kill(os.getpid(), signal.SIGKILL)\n' >kill9.py
printf 'import os, sys\nsys.exit(0 if os.environ["TORCHELASTIC_RESTART_COUNT"] == "1" else 5)\n' >second.py
assert_eq "torchrun=0 ours=0" "$(both --standalone --nproc_per_node 2 ok.py)" "a job whose workers succeed"
assert_eq "torchrun=1 ours=1" "$(both --standalone --nproc_per_node 2 exit3.py)" "a worker that exits 3"
assert_eq "torchrun=1 ours=1" "$(both --standalone --nproc_per_node 2 kill9.py)" "a worker killed by SIGKILL"
assert_eq "torchrun=0 ours=0" "$(both --standalone --nproc_per_node 2 --max_restarts 1 second.py)" \
  "a worker that succeeds on the restart"
assert_eq "torchrun=1 ours=1" "$(both --standalone --nproc_per_node 1 --max_restarts 0 second.py)" \
  "the same without a restart"

mkdir -p ref our
dump='import json, os, sys; json.dump(dict(os.environ), open(os.path.join(sys.argv[1], os.environ["RANK"] + ".json"), "w"))'
"${clean_env[@]}" timeout 120 $py -m torch.distributed.run --redirects 1 --tee 1 --log_dir "$test_tmp/logs/envref" --standalone --role trainer --nproc_per_node 2 --no_python \
  $py -c "$dump" ref >/dev/null 2>&1 || fail "torchrun failed"
"${clean_env[@]}" timeout 120 "$HPCLAUNCH" torchrun --redirects 1 --tee 1 --log_dir "$test_tmp/logs/envour" --standalone --role trainer --nproc_per_node 2 --no_python \
  $py -c "$dump" our >/dev/null 2>&1 || fail "hpclaunch torchrun failed"
$py - <<'PY' || fail "environments differ (see above)"
import json, os
allowed_values = {"MASTER_ADDR", "MASTER_PORT", "TORCHELASTIC_ERROR_FILE", "TORCHELASTIC_RUN_ID", "OMP_NUM_THREADS"}
allowed_extra = {"PYTHONUNBUFFERED", "TORCH_NCCL_ASYNC_ERROR_HANDLING"}
ok = True
for rank in range(2):
    ref, got = json.load(open(f"ref/{rank}.json")), json.load(open(f"our/{rank}.json"))
    if set(ref) - set(got): print(f"rank {rank}: torchrun sets {sorted(set(ref) - set(got))}, we do not"); ok = False
    if set(got) - set(ref) - allowed_extra: print(f"rank {rank}: we set {sorted(set(got) - set(ref) - allowed_extra)}"); ok = False
    for k in sorted(set(ref) & set(got) - allowed_values):
        if ref[k] != got[k]: print(f"rank {rank}: {k}: torchrun '{ref[k]}', ours '{got[k]}'"); ok = False
    if got.get("ROLE_NAME") != "trainer": print(f"rank {rank}: ROLE_NAME {got.get('ROLE_NAME')}"); ok = False
raise SystemExit(0 if ok else 1)
PY
echo ok
