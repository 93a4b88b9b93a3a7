#!/usr/bin/env bash
# `hpclaunch submit --site local`: the job runs here in the foreground on emulated nodes, its output is streamed
# and kept in the job directory, and submit exits with the job's exit code.
source "$(dirname "$0")/lib.sh"
need_hpclaunch
for v in $(env | grep -oE '^(SLURM|PBS|PMI|OMPI_COMM|HPCLAUNCH_)[A-Z_]*' || true); do unset "$v"; done
unset MASTER_ADDR MASTER_PORT
cd "$test_tmp"
report='echo "task $RANK $LOCAL_RANK $WORLD_SIZE $GROUP_RANK $MASTER_ADDR $OMP_NUM_THREADS $X"'

out=$("$HPCLAUNCH" submit --site local --nodes 2 --gpus-per-node 2 --launcher srun --env 'X=a b' --job-dir "$test_tmp/srun" \
  -- bash -c "$report" 2>"$test_tmp/err") || fail "local srun job failed: $(cat "$test_tmp/err")"
assert_eq "0 0 4 0 127.0.0.1 1 a b
1 1 4 0 127.0.0.1 1 a b
2 0 4 1 127.0.0.1 1 a b
3 1 4 1 127.0.0.1 1 a b" "$(echo "$out" | grep '^task ' | sed 's/^task //' | sort -n)" "local srun tasks"
assert_eq "$(echo "$out" | sort)" "$(sort "$test_tmp/srun/output.log")" "output.log holds what was streamed"
assert_contains "$(cat "$test_tmp/srun/job.json")" '"job_id": "local-'

out=$("$HPCLAUNCH" submit --site local --nodes 1 --gpus-per-node 3 --launcher mpirun --job-dir "$test_tmp/mpi" \
  -- bash -c "$report" 2>"$test_tmp/err") || fail "local mpirun job failed: $(cat "$test_tmp/err")"
assert_eq "0 1 2" "$(echo "$out" | untag | grep '^task ' | awk '{ print $2 }' | sort -n | xargs)" "local mpirun ranks"

# As `srun --kill-on-bad-exit=1`: one failed task ends the others (here one that would wait for it for 10 min),
# and the job's exit code is the failure's.
rc=0
timeout 120 "$HPCLAUNCH" submit --site local --nodes 2 --launcher srun --job-dir "$test_tmp/kill" -- \
  bash -c 'if [ "$RANK" = 1 ]; then exit 5; fi; sleep 600' >"$test_tmp/out" 2>"$test_tmp/err" || rc=$?
assert_eq 5 "$rc" "exit code of a local job whose rank 1 failed with 5 while rank 0 waited"
assert_contains "$(cat "$test_tmp/out")" "hpclaunch local-srun: task 1 exited with 5: ending the other 1 task(s)"
grep -q '^hpclaunch: local job local-[0-9-]* exited with 5$' "$test_tmp/err" || fail "no exit line: $(cat "$test_tmp/err")"
