#!/usr/bin/env bash
# `hpclaunch env` and `hpclaunch exec` outside any launcher: a world of one with a note, exec replaces itself
# (same pid, the command's own exit status and signals), and bad input gives one clear error.
source "$(dirname "$0")/lib.sh"
need_hpclaunch
clean_env=(env -u SLURM_JOB_ID -u SLURM_JOBID -u SLURM_STEP_ID -u SLURM_STEPID -u PBS_JOBID -u OMPI_COMM_WORLD_RANK
  -u PMI_RANK -u PMI_SIZE -u HPCLAUNCH_LOCAL_JOB -u MASTER_ADDR -u MASTER_PORT -u HPCLAUNCH_MASTER_PORT)

out=$("${clean_env[@]}" "$HPCLAUNCH" env 2>"$test_tmp/err")
assert_eq "export RANK=0
export LOCAL_RANK=0
export WORLD_SIZE=1
export LOCAL_WORLD_SIZE=1
export GROUP_RANK=0
export GROUP_WORLD_SIZE=1
export MASTER_ADDR=127.0.0.1
export MASTER_PORT=29500" "$out" "env in a plain shell"
assert_contains "$(cat "$test_tmp/err")" "hpclaunch: note: not inside srun, mpirun or a batch job: a world of one"
eval "$out"
assert_eq 1 "$WORLD_SIZE" "eval of env's output"

json=$("${clean_env[@]}" MASTER_PORT=1234 "$HPCLAUNCH" env --format json 2>/dev/null)
assert_eq '{"RANK":"0","LOCAL_RANK":"0","WORLD_SIZE":"1","LOCAL_WORLD_SIZE":"1","GROUP_RANK":"0","GROUP_WORLD_SIZE":"1","MASTER_ADDR":"127.0.0.1","MASTER_PORT":"1234"}' "$json" "env --format json"

# exec: the command keeps hpclaunch's pid, so no process sits between the launcher and it.
"${clean_env[@]}" "$HPCLAUNCH" exec --master-addr 10.1.2.3 --master-port 4321 -- \
  sh -c 'echo "$$ $RANK $WORLD_SIZE $MASTER_ADDR $MASTER_PORT" >"$0"' "$test_tmp/exec.out" 2>/dev/null &
pid=$!
wait $pid
assert_eq "$pid 0 1 10.1.2.3 4321" "$(cat "$test_tmp/exec.out")" "exec'd command (pid rank world addr port)"

rc=0; "${clean_env[@]}" "$HPCLAUNCH" exec -- sh -c 'exit 7' 2>/dev/null || rc=$?
assert_eq 7 "$rc" "exit status through exec"
"${clean_env[@]}" "$HPCLAUNCH" exec -- sh -c 'echo ready >"$0"; exec sleep 30' "$test_tmp/ready" 2>/dev/null &
pid=$!
wait_until 30 "the command under exec to start" '[ -s "$test_tmp/ready" ]'
kill -TERM $pid
rc=0; wait $pid || rc=$?
assert_eq 143 "$rc" "status after SIGTERM to exec's pid"

# Quoting: values with spaces survive eval.
out=$("${clean_env[@]}" MASTER_ADDR='a b' "$HPCLAUNCH" env 2>/dev/null)
assert_contains "$out" "export MASTER_ADDR='a b'"

assert_fails "exec: no command to run; put it after \`--\`" "$HPCLAUNCH" exec
assert_fails "exec: unexpected argument 'python3'; put the command after \`--\`" "$HPCLAUNCH" exec python3 -c 1
assert_fails "--master-adr: unknown option (did you mean '--master-addr'?)" "$HPCLAUNCH" exec --master-adr x -- true
assert_fails "--master-port: 'x' is not a valid value" "$HPCLAUNCH" env --master-port x
assert_fails "nosuchcommand-xyz: cannot run: No such file or directory" "$HPCLAUNCH" exec -- nosuchcommand-xyz
rc=0; "$HPCLAUNCH" exec -- nosuchcommand-xyz 2>/dev/null || rc=$?
assert_eq 127 "$rc" "exit status for a missing command"
assert_fails "--gpu-bind: unknown GPU binding 'local_rank' (did you mean 'local-rank'?)" \
  "$HPCLAUNCH" exec --gpu-bind local_rank -- true
assert_fails "--gpu-bind local-rank: no GPU list to pick from" \
  env -u CUDA_VISIBLE_DEVICES "${clean_env[@]}" "$HPCLAUNCH" exec --gpu-bind local-rank -- true
assert_fails "HPCLAUNCH_MASTER_ADDR_RULE: unknown master address rule 'first'" \
  env HPCLAUNCH_MASTER_ADDR_RULE=first SLURM_JOB_ID=5 SLURM_NTASKS=1 "$HPCLAUNCH" env
assert_fails "OMPI_COMM_WORLD_SIZE: not set, but this is an Open MPI task" \
  env OMPI_COMM_WORLD_RANK=1 "$HPCLAUNCH" env
