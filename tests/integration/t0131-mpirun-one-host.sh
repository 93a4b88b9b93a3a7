#!/usr/bin/env bash
# `mpirun -np 2 hpclaunch env` / `exec` on one machine with no scheduler and no MASTER_ADDR: Open MPI says every
# rank is on this host (OMPI_COMM_WORLD_LOCAL_SIZE = OMPI_COMM_WORLD_SIZE), so the address is this host's
# (127.0.0.1), said once on stderr (rank 0), and both commands go on. Two hosts without a rule stay an error
# (t0130 §2). Real Open MPI mpirun; nothing faked.
source "$(dirname "$0")/lib.sh"
need_hpclaunch
source "$(dirname "$0")/lib-mpi.sh"
cd "$test_tmp"

mpirun -np 2 --oversubscribe -bind-to none "$HPCLAUNCH" env >env.out 2>env.err ||
  fail "mpirun -np 2 hpclaunch env failed: $(cat env.err)"
assert_eq "MASTER_ADDR=127.0.0.1
MASTER_ADDR=127.0.0.1" "$(untag <env.out | grep -o 'MASTER_ADDR=[^ ]*' | sort)" "both ranks' MASTER_ADDR"
assert_eq 1 "$(grep -c 'note: MASTER_ADDR=127.0.0.1: open-mpi puts all 2 ranks on this host' env.err)" \
  "one note line on stderr: $(cat env.err)"

report='echo "task $RANK $WORLD_SIZE $LOCAL_WORLD_SIZE $MASTER_ADDR"'
mpirun -np 2 --oversubscribe -bind-to none "$HPCLAUNCH" exec -- sh -c "$report" >exec.out 2>exec.err ||
  fail "mpirun -np 2 hpclaunch exec failed: $(cat exec.err)"
assert_eq "task 0 2 2 127.0.0.1
task 1 2 2 127.0.0.1" "$(lines_with exec.out 'task ' | sed 's/^/task /')" "exec: the ranks and the address"
assert_contains "$(cat exec.err)" "note: MASTER_ADDR=127.0.0.1: open-mpi puts all 2 ranks on this host"
echo ok
