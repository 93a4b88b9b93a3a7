#!/usr/bin/env bash
# torchrun 2.15 (the peers' venv) beside hpclaunch's torchrun face, same flags, same clean environment: the exit
# status of a job whose worker succeeds, exits 3, or is killed by SIGKILL; a worker that fails on the first attempt
# and succeeds on the restart (--max_restarts 1); and the workers' variables under --standalone --role trainer
# --nproc_per_node 2 --no_python (compared as in t0420, by lib-torchrun-env.py; the run id differs on purpose:
# torchrun's --standalone draws a random one).
source "$(dirname "$0")/lib.sh"
need_hpclaunch
py=$(peer_python)
cd "$test_tmp"
clean_env=(env -i PATH=/usr/bin:/bin HOME="$test_tmp" HPCLAUNCH_PYTHON=$py)
both() {  # ARG...: prints "torchrun=RC ours=RC"
  local a=0 b=0
  "${clean_env[@]}" timeout 120 $py -m torch.distributed.run "$@" >"$test_tmp/ref.out" 2>&1 || a=$?
  "${clean_env[@]}" timeout 120 "$HPCLAUNCH" torchrun "$@" >"$test_tmp/our.out" 2>&1 || b=$?
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
"${clean_env[@]}" timeout 120 $py -m torch.distributed.run --standalone --role trainer --nproc_per_node 2 --no_python \
  $py -c "$dump" ref >/dev/null 2>&1 || fail "torchrun failed"
"${clean_env[@]}" timeout 120 "$HPCLAUNCH" torchrun --standalone --role trainer --nproc_per_node 2 --no_python \
  $py -c "$dump" our >/dev/null 2>&1 || fail "hpclaunch torchrun failed"
$py "$HPCLAUNCH_SOURCE_DIR/tests/integration/lib-torchrun-env.py" ref our 2 --vary TORCHELASTIC_RUN_ID ||
  fail "environments differ (see above)"
assert_eq trainer "$($py -c 'import json; print(json.load(open("our/1.json"))["ROLE_NAME"])')" "--role reaches ROLE_NAME"
echo ok
