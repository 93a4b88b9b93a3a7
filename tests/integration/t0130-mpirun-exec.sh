#!/usr/bin/env bash
# `hpclaunch exec` under a real Open MPI mpirun: 4 ranks from a one-slot hostfile with --oversubscribe; the
# Sockeye seed's PBS Pro line (mpirun --hostfile $PBS_NODEFILE ...) with the environment a PBS job has; and a
# two-host PBS node file (orted started through a stand-in for ssh) for the node ranks, block and round robin.
source "$(dirname "$0")/lib.sh"
need_hpclaunch
source "$(dirname "$0")/lib-mpi.sh"
report='echo "task $RANK ${HPCLAUNCH_NODE_LOCAL_RANK-$LOCAL_RANK} $WORLD_SIZE $LOCAL_WORLD_SIZE ${GROUP_RANK-} ${GROUP_WORLD_SIZE-} $MASTER_ADDR $MASTER_PORT ${CUDA_VISIBLE_DEVICES-none}"'

# 1. One slot, four ranks: refused without --oversubscribe (the rule the Sockeye seed teaches), fine with it.
echo "localhost slots=1" >"$test_tmp/hostfile"
rc=0; mpirun -np 4 --hostfile "$test_tmp/hostfile" true >"$test_tmp/noover.out" 2>&1 || rc=$?
[ $rc -ne 0 ] || fail "mpirun -np 4 on one slot ran without --oversubscribe; the test's premise is wrong"
mpirun -np 4 --hostfile "$test_tmp/hostfile" --oversubscribe \
  "$HPCLAUNCH" exec --master-addr 127.0.0.1 -- sh -c "$report" >"$test_tmp/one.out" 2>"$test_tmp/one.err" \
  || fail "mpirun -np 4 --oversubscribe failed: $(cat "$test_tmp/one.err")"
port=$(lines_with "$test_tmp/one.out" 'task ' | awk '{print $8}' | sort -u)
[ "$(echo "$port" | wc -l)" = 1 ] && [ "$port" -ge 20000 ] && [ "$port" -le 29999 ] \
  || fail "ranks disagree on MASTER_PORT or it is outside 20000-29999: $port"
assert_eq "0 0 4 4 0 1 127.0.0.1 $port none
1 1 4 4 0 1 127.0.0.1 $port none
2 2 4 4 0 1 127.0.0.1 $port none
3 3 4 4 0 1 127.0.0.1 $port none" "$(lines_with "$test_tmp/one.out" 'task ')" "mpirun -np 4 on one slot"

# 2. No scheduler, no MASTER_ADDR, two hosts (n1, n2 in a plain hostfile): one clear error per rank, not two
#    worlds. (All ranks on one host: the address is this host's, t0131.)
printf "n1 slots=1\nn2 slots=1\n" >"$test_tmp/two-hosts"
rc=0
mpirun -np 2 --hostfile "$test_tmp/two-hosts" --mca plm_rsh_agent "$(make_fake_ssh)" -x PATH \
  "$HPCLAUNCH" exec -- true >"$test_tmp/noaddr.out" 2>&1 || rc=$?
[ $rc -ne 0 ] || fail "exec on two hosts without any MASTER_ADDR source succeeded"
assert_contains "$(cat "$test_tmp/noaddr.out")" \
  "hpclaunch: error: MASTER_ADDR: unset, and the first-node rule has no node list"

# 3. The Sockeye PBS Pro seed: select=2:ncpus=8:ngpus=4 placed both chunks on this host, so the node file
#    names it twice; the seed sets CUDA_VISIBLE_DEVICES itself (PBS does not).
(
  host=$(hostname)
  pbs_job_env 12.pbshost "$host" "$host"
  cd "$PBS_O_WORKDIR"
  rc=0; "$HPCLAUNCH" env >/dev/null 2>"$test_tmp/batch.err" || rc=$?
  assert_eq 2 "$rc" "hpclaunch env in the PBS batch script of a 2-slot job"
  assert_contains "$(cat "$test_tmp/batch.err")" "PBS_NODEFILE: lists 2 MPI slots: this is the batch script of PBS job 12.pbshost"
  mpirun -np 4 --hostfile "$PBS_NODEFILE" --oversubscribe -x CUDA_VISIBLE_DEVICES=0,1,2,3 -x PATH -bind-to none \
    -map-by :OVERSUBSCRIBE -mca pml ob1 -mca btl ^openib \
    "$HPCLAUNCH" exec --gpu-bind local-rank -- sh -c "$report" >"$test_tmp/pbs.out" 2>"$test_tmp/pbs.err" \
    || fail "the Sockeye seed's mpirun line failed: $(cat "$test_tmp/pbs.err")"
  assert_eq "0 0 4 4 0 1 $host 20012 0
1 1 4 4 0 1 $host 20012 1
2 2 4 4 0 1 $host 20012 2
3 3 4 4 0 1 $host 20012 3" "$(lines_with "$test_tmp/pbs.out" 'task ')" "PBS one host, 4 ranks"
)

# 4. Two hosts in the node file (select=2:ncpus=2:mpiprocs=2: each host once per MPI process), MASTER_ADDR
#    the first, node ranks from Open MPI's block placement.
(
  pbs_job_env 13.pbshost n1 n1 n2 n2
  mpirun -np 4 --hostfile "$PBS_NODEFILE" --mca plm_rsh_agent "$(make_fake_ssh)" -x PATH \
    "$HPCLAUNCH" exec -- sh -c "$report" >"$test_tmp/two.out" 2>"$test_tmp/two.err" \
    || fail "mpirun over n1,n2 failed: $(cat "$test_tmp/two.err")"
  assert_eq "0 0 4 2 0 2 n1 20013 none
1 1 4 2 0 2 n1 20013 none
2 0 4 2 1 2 n1 20013 none
3 1 4 2 1 2 n1 20013 none" "$(lines_with "$test_tmp/two.out" 'task ')" "PBS two hosts, 4 ranks"
)

# 5. The same hosts with --map-by node: ranks go round robin, and the node ranks follow them.
(
  pbs_job_env 15.pbshost n1 n1 n2 n2
  mpirun -np 4 --map-by node --hostfile "$PBS_NODEFILE" --mca plm_rsh_agent "$(make_fake_ssh)" -x PATH \
    "$HPCLAUNCH" exec -- sh -c "$report" >"$test_tmp/rr.out" 2>"$test_tmp/rr.err" \
    || fail "mpirun --map-by node over n1,n2 failed: $(cat "$test_tmp/rr.err")"
  assert_eq "0 0 4 2 0 2 n1 20015 none
1 0 4 2 1 2 n1 20015 none
2 1 4 2 0 2 n1 20015 none
3 1 4 2 1 2 n1 20015 none" "$(lines_with "$test_tmp/rr.out" 'task ')" "PBS two hosts, --map-by node"
)
