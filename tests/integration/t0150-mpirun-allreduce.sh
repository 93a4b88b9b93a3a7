#!/usr/bin/env bash
# The proof under mpirun: the LibTorch tool's ranks form a gloo group through TCPStore(MASTER_ADDR,
# MASTER_PORT) from the variables `hpclaunch exec` set — 4 ranks on a one-slot hostfile with --oversubscribe,
# and 4 ranks over a PBS node file naming n1 and n2 (orted through the ssh stand-in, see lib-mpi.sh).
# Skipped (77) only when LibTorch was not found at build time.
source "$(dirname "$0")/lib.sh"
tool=${HPCLAUNCH_ALLREDUCE_CHECK:-$HPCLAUNCH_BUILD_DIR/tests/allreduce_check}
[ -x "$tool" ] || skip "LibTorch not found at build time: no allreduce_check"
need_hpclaunch
source "$(dirname "$0")/lib-mpi.sh"

echo "localhost slots=1" >"$test_tmp/hostfile"
timeout 180 mpirun -np 4 --hostfile "$test_tmp/hostfile" --oversubscribe \
  "$HPCLAUNCH" exec --master-addr 127.0.0.1 --master-port 0 -- "$tool" >"$test_tmp/bad-port.out" 2>&1 \
  && fail "--master-port 0 was accepted"
assert_contains "$(cat "$test_tmp/bad-port.out")" "--master-port: '0' is not a port number"
timeout 180 mpirun -np 4 --hostfile "$test_tmp/hostfile" --oversubscribe \
  "$HPCLAUNCH" exec --master-addr 127.0.0.1 -- "$tool" >"$test_tmp/one.out" 2>"$test_tmp/one.err" \
  || fail "allreduce under mpirun (one slot) failed: $(cat "$test_tmp/one.out" "$test_tmp/one.err")"
assert_eq "rank=0 local_rank=0 world=4 master=127.0.0.1:PORT sum=10 expected=10 ok
rank=1 local_rank=1 world=4 master=127.0.0.1:PORT sum=10 expected=10 ok
rank=2 local_rank=2 world=4 master=127.0.0.1:PORT sum=10 expected=10 ok
rank=3 local_rank=3 world=4 master=127.0.0.1:PORT sum=10 expected=10 ok" \
  "$(lines_with "$test_tmp/one.out" 'allreduce ' | sed -E 's/:2[0-9]{4} /:PORT /')" \
  "allreduce under mpirun, one slot"

(
  id=$((100 + $$ % 9000))  # the port is derived from it: two runs of this test side by side do not collide
  pbs_job_env "$id.pbshost" n1 n1 n2 n2
  timeout 180 mpirun -np 4 --hostfile "$PBS_NODEFILE" --mca plm_rsh_agent "$(make_fake_ssh)" -x PATH \
    "$HPCLAUNCH" exec -- "$tool" >"$test_tmp/pbs.out" 2>"$test_tmp/pbs.err" \
    || fail "allreduce under mpirun over n1,n2 failed: $(cat "$test_tmp/pbs.out" "$test_tmp/pbs.err")"
  assert_eq "rank=0 local_rank=0 world=4 master=n1:$((20000 + id)) sum=10 expected=10 ok
rank=1 local_rank=1 world=4 master=n1:$((20000 + id)) sum=10 expected=10 ok
rank=2 local_rank=0 world=4 master=n1:$((20000 + id)) sum=10 expected=10 ok
rank=3 local_rank=1 world=4 master=n1:$((20000 + id)) sum=10 expected=10 ok" \
    "$(lines_with "$test_tmp/pbs.out" 'allreduce ')" "allreduce under mpirun, PBS node file n1,n2"
)
