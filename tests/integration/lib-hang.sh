# Sourced (after lib.sh) by the hang tests t0440 and t0441: the torch 2.15 client (lib-hang-client.py) on 2
# emulated nodes x 2 workers, its unfaulted values ($want), and check_hang MODE CODE, which hangs rank 2 by MODE
# and checks that it is found, shown (py-spy's stacks, the frame CODE) and restarted to the unfaulted values.
py=$(peer_python)
[ -x "$(dirname "$py")/py-spy" ] || fail "no py-spy in the peers' venv; run scripts/install-deps.sh"
cd "$test_tmp"
cp "$HPCLAUNCH_SOURCE_DIR/tests/integration/lib-hang-client.py" client.py
two_nodes() {  # NAME ARG...: two agents (node ranks 0, 1) with ARG...; output in NAME0.out, NAME1.out; status NAME.rc
  local name=$1 port i rc=0
  shift
  port=$(free_port)
  mkdir -p "job-$name"
  for i in 0 1; do
    env -i PATH=/usr/bin:/bin HOME="$test_tmp" TMPDIR="$TMPDIR" PYTHONPATH="$HPCLAUNCH_SOURCE_DIR/python" \
      HPCLAUNCH_PYTHON="$py" HPCLAUNCH_RDZV_SECRET=5ec7e7 HPCLAUNCH_JOB_DIR="$test_tmp/job-$name" \
      timeout 300 "$HPCLAUNCH" agent --nnodes 2 --node-rank $i --nproc-per-node 2 --rdzv-endpoint 127.0.0.1:$port \
      --rdzv-id "$name" "$@" >"$name$i.out" 2>&1 &
  done
  wait -n || rc=$?
  wait -n || rc=$?
  echo "$rc" >"$name.rc"
}

two_nodes clean client.py none
assert_eq 0 "$(cat clean.rc)" "the run without a fault: $(tail -n 20 clean0.out clean1.out)"
want=$(cat clean0.out clean1.out | sed -n 's/.*hang-client rank=\([0-9]\) attempt=0 value=\(.*\)/\1 \2/p' | sort)
assert_eq 4 "$(wc -l <<<"$want")" "ranks that ended the run without a fault"

check_hang() {  # MODE CODE: rank 2 hung by MODE; CODE: the source line its frame must name
  local mode=$1 code=$2 out stacks
  two_nodes "$mode" --hang-timeout 5 --hang-startup-timeout 60 --max-restarts 1 client.py "$mode"
  out=$(cat "${mode}0.out" "${mode}1.out")
  assert_eq 0 "$(cat "$mode.rc")" "the job whose rank 2 hung ($mode): $out"
  assert_contains "$(cat "${mode}1.out")" "rank 2 made no progress for " "node 1's agent sees the hang ($mode)"
  assert_contains "$(cat "${mode}1.out")" "hang: rank 2 (local rank 0) on $(hostname) made no progress for " "($mode)"
  assert_contains "$(cat "${mode}1.out")" "in client.py:" "the frame names the script ($mode)"
  assert_contains "$(cat "${mode}1.out")" "\`$code\`" "the hung line ($mode)"
  stacks=job-$mode/stacks/attempt_0
  assert_file "$stacks/rank_2.txt"
  assert_file "$stacks/rank_3.txt"
  assert_contains "$(cat "$stacks/rank_2.txt")" "-- py-spy dump" "rank 2's stacks come from py-spy ($mode)"
  assert_contains "$(cat "$stacks/rank_2.txt")" "client.py" "($mode)"
  assert_contains "$(cat "$stacks/rank_3.txt")" "all_reduce" "rank 3 waits in its collective ($mode)"
  assert_contains "$(cat "$stacks/hang-$(hostname).json")" '"source": "progress"' "($mode)"
  got=$(sed -n 's/.*hang-client rank=\([0-9]\) attempt=1 value=\(.*\)/\1 \2/p' <<<"$out" | sort)
  assert_eq "$want" "$got" "every rank's value after the restart is the unfaulted run's ($mode)"
}
