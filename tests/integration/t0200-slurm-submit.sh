#!/usr/bin/env bash
# `hpclaunch submit` against the real test cluster with a profile shaped like Perlmutter (4 GPUs, -C gpu, a QOS,
# a _g account): for each launcher the job runs and its tasks show the planned geometry; a command whose
# arguments hold every awkward character arrives byte-exact; the job directory holds script, plan and id.
source "$(dirname "$0")/lib.sh"
need_hpclaunch
need_cluster
submit() { submit_test_site test-perlmutter "$1" --account m1234_g "${@:2}"; }  # JOBDIR ARG...: prints the id

cd "$test_tmp"
report='echo "task $RANK $LOCAL_RANK $WORLD_SIZE $SLURM_CPUS_PER_TASK $SLURM_NTASKS_PER_NODE $MASTER_ADDR $OMP_NUM_THREADS"'

# One task per GPU under srun: 8 tasks, 4 per node, 16 CPUs each.
id=$(submit "$test_tmp/srun" --nodes 2 --launcher srun -- bash -c "$report")
[[ $id =~ ^[0-9]+$ ]] || fail "submit printed '$id', not a job id"
assert_eq COMPLETED "$(wait_job "$id")" "srun job state"
out=$(sed 's/^ *[0-9]*: //' "$test_tmp/srun/slurm-$id.out")  # srun --label's "RANK: " prefix
assert_eq "0 1 2 3 4 5 6 7" "$(grep -o '^ *[0-9]*: task [0-9]*' "$test_tmp/srun/slurm-$id.out" | awk '$1 + 0 == $3 { print $3 }' | sort -n | xargs)" \
  "srun --label prefixes equal to the ranks"
assert_eq "0 1 2 3 4 5 6 7" "$(echo "$out" | awk '$1 == "task" { print $2 }' | sort -n | xargs)" "ranks"
assert_eq "0 0 1 1 2 2 3 3" "$(echo "$out" | awk '$1 == "task" { print $3 }' | sort -n | xargs)" "local ranks"
assert_eq "8 16 4 n1 16" "$(echo "$out" | awk '$1 == "task" { print $4, $5, $6, $7, $8 }' | sort -u)" "world, cpus, tasks/node, master, threads"
assert_file "$test_tmp/srun/job.sh"
assert_contains "$(cat "$test_tmp/srun/plan.json")" '"world_size": 8'
assert_contains "$(cat "$test_tmp/srun/job.json")" "\"job_id\": \"$id\""
script=$(cat "$test_tmp/srun/job.sh")
for want in '#SBATCH --constraint=gpu' '#SBATCH --qos=regular' '#SBATCH --gpus-per-node=4' '#SBATCH --account=m1234_g'; do
  assert_contains "$script" "$want" "rendered script"
done

# srun --kill-on-bad-exit=1: when rank 5 fails, the others (which would wait for it for 10 minutes) are ended and
# the job fails at once instead of at its time limit.
id=$(submit "$test_tmp/bad" --nodes 2 --launcher srun --time 30 -- bash -c 'if [ "$RANK" = 5 ]; then exit 7; fi; sleep 600')
assert_eq FAILED "$(wait_job "$id" 120)" "state of a job with one failed rank"
assert_contains "$(cat "$test_tmp/bad/slurm-$id.out")" "task 5: Exited with exit code 7" "srun's report"

# mpirun from the batch node: the same geometry, ranks from Open MPI.
id=$(submit "$test_tmp/mpirun" --nodes 2 --launcher mpirun -- bash -c "$report")
assert_eq COMPLETED "$(wait_job "$id")" "mpirun job state (output: $(cat "$test_tmp/mpirun/slurm-$id.out" 2>/dev/null))"
out=$(untag <"$test_tmp/mpirun/slurm-$id.out")
assert_contains "$(cat "$test_tmp/mpirun/slurm-$id.out")" "]<stdout>:task 0 " "mpirun --tag-output's rank prefix"
assert_eq "0 1 2 3 4 5 6 7" "$(echo "$out" | awk '$1 == "task" { print $2 }' | sort -n | xargs)" "mpirun ranks"
assert_eq "8" "$(echo "$out" | awk '$1 == "task" { print $4 }' | sort -u)" "mpirun world size"

# Every awkward character, byte-exact, through sbatch, srun and exec.
args=('a b' "it's" '$HOME' '`id`' 'x;y' $'line1\nline2' '' '*' '"q"' '\\' '-n' '--' $'tab\there' 'ünï')
printer='import sys; sys.stdout.write(repr(sys.argv[1:]))'
want=$(/usr/bin/python3 -c "$printer" "${args[@]}")
id=$(submit "$test_tmp/quote" --nodes 1 --gpus-per-node 1 --env 'WEIRD=$x `y` "z"' -- /usr/bin/python3 -c "$printer" "${args[@]}")
assert_eq COMPLETED "$(wait_job "$id")" "quoting job state"
assert_eq "0: $want" "$(cat "$test_tmp/quote/slurm-$id.out")" "arguments as received (after srun --label's prefix)"

id=$(submit "$test_tmp/env" --nodes 1 --gpus-per-node 1 --env 'WEIRD=$x `y` "z"' -- /usr/bin/python3 -c 'import os; print(repr(os.environ["WEIRD"]))')
assert_eq COMPLETED "$(wait_job "$id")" "env job state"
assert_eq "0: '\$x \`y\` \"z\"'" "$(cat "$test_tmp/env/slurm-$id.out")" "--env value as received"

# A job the scheduler refuses leaves no job directory behind.
assert_fails "sbatch: refused the job" submit "$test_tmp/refused" --nodes 2 --qos regular --constraint nosuchfeature -- true
[ ! -e "$test_tmp/refused" ] || fail "a refused job left $test_tmp/refused behind"
