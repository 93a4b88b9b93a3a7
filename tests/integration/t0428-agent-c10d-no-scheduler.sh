#!/usr/bin/env bash
# torchrun's own multi-node line outside a scheduler (issue 53): two shells on this machine each run
#   torchrun --nnodes=2 --nproc_per_node=2 --rdzv_backend=c10d --rdzv_endpoint=127.0.0.1:PORT --rdzv_id=ID client.py
# with no node rank and no scheduler's variables, first with torchrun 2.15 itself (the peers' venv), then with the
# torchrun face and with `hpclaunch agent` (its secret exported). As torchrun's agents, the one that can serve the
# endpoint is node 0 and the store numbers the other: the torch 2.15 gloo client sees a world of 4, ranks 0-3, its
# allreduce sums to 6, and both shells exit 0, as under torchrun.
source "$(dirname "$0")/lib.sh"
need_hpclaunch
py=$(peer_python)
cd "$test_tmp"
cp "$HPCLAUNCH_SOURCE_DIR/tests/integration/lib-torch-client.py" client.py
clean_env=(env -i PATH=/usr/bin:/bin HOME="$test_tmp" HPCLAUNCH_PYTHON=$py)
two_shells() {  # NAME LAUNCHER...: the line in two shells at once; their output in NAME0.out and NAME1.out
  local name=$1 port i rc=0
  shift
  port=$(free_port)
  for i in 0 1; do
    "${clean_env[@]}" timeout 300 "$@" --nnodes=2 --nproc_per_node=2 --rdzv_backend=c10d \
      --rdzv_endpoint=127.0.0.1:$port --rdzv_id="$name" client.py "$name" >"$name$i.out" 2>&1 &
  done
  wait -n || rc=$?
  wait -n || rc=$?
  return $rc
}
check() {  # NAME
  local out
  out=$(cat "$1"0.out "$1"1.out)
  for r in 0 1 2 3; do assert_contains "$out" "$1 rank=$r world=4 sum=6" "$1"; done
}

two_shells torchrun "$(dirname "$py")/torchrun" || fail "torchrun 2.15 itself failed: $(cat torchrun0.out torchrun1.out)"
check torchrun
two_shells face "$HPCLAUNCH" torchrun || fail "the torchrun face failed: $(cat face0.out face1.out)"
check face
clean_env+=(HPCLAUNCH_RDZV_SECRET=5ec7e7)
two_shells agent "$HPCLAUNCH" agent || fail "hpclaunch agent failed: $(cat agent0.out agent1.out)"
check agent
# The node that served the rendezvous ran ranks 0-1, the one it numbered ranks 2-3.
assert_contains "$(cat agent0.out agent1.out)" "[$(hostname):3] agent rank=3 world=4 sum=6"
