#!/usr/bin/env bash
# The PBS Pro path without a PBS server (none is packaged for Debian): the script `hpclaunch submit` renders for
# Sockeye's PBS form is run as PBS would run it — from $HOME, with the environment a PBS Pro job has and a
# node file naming two hosts — and its real mpirun line starts 8 ranks that form one LibTorch gloo world.
# Verified only this way: qsub's acceptance of the #PBS lines (checked against the seed in the golden test).
source "$(dirname "$0")/lib.sh"
need_hpclaunch
source "$(dirname "$0")/lib-mpi.sh"
tool=${HPCLAUNCH_ALLREDUCE_CHECK:-$HPCLAUNCH_BUILD_DIR/tests/allreduce_check}

mkdir -p "$test_tmp/work"
cd "$test_tmp/work"
report='echo "task $RANK $LOCAL_RANK $WORLD_SIZE $MASTER_ADDR $MASTER_PORT $CUDA_VISIBLE_DEVICES $PWD"'
"$HPCLAUNCH" render --site test-sockeye-pbs --site-file "$HPCLAUNCH_SOURCE_DIR/tests/integration/sites/test-sockeye-pbs.yaml" \
  --nodes 2 --account st-someprof-1-gpu --job-dir "$test_tmp/job" -- sh -c "$report" >"$test_tmp/job.sh"
assert_contains "$(cat "$test_tmp/job.sh")" '#PBS -l walltime=01:00:00,select=2:ncpus=8:ngpus=4:mem=64gb:gpu_mem=32gb'

(
  id=$((100 + $$ % 9000))
  pbs_job_env "$id.pbshost" n1 n2   # select=2:...: one line per chunk, the hosts' names
  export PBS_O_WORKDIR=$test_tmp/work OMPI_MCA_plm_rsh_agent=$(make_fake_ssh)
  cd "$HOME"                        # a PBS job starts in $HOME; the script must go back itself
  timeout 180 bash "$test_tmp/job.sh" >"$test_tmp/run.out" 2>"$test_tmp/run.err" \
    || fail "the rendered PBS script failed: $(cat "$test_tmp/run.out" "$test_tmp/run.err")"
  host=$(hostname -s)
  port=$((20000 + id % 10000))
  expected=""
  for r in 0 1 2 3 4 5 6 7; do
    expected+="$r $((r % 4)) 8 $host $port 0,1,2,3 $test_tmp/work"$'\n'
  done
  assert_eq "${expected%$'\n'}" "$(lines_with "$test_tmp/run.out" 'task ' | sort -n)" \
    "ranks (RANK LOCAL_RANK WORLD_SIZE MASTER_ADDR MASTER_PORT CUDA_VISIBLE_DEVICES PWD)"
)

[ -x "$tool" ] || skip "LibTorch not found at build time: the rendered PBS script was checked, the allreduce not"
"$HPCLAUNCH" render --site test-sockeye-pbs --site-file "$HPCLAUNCH_SOURCE_DIR/tests/integration/sites/test-sockeye-pbs.yaml" \
  --nodes 2 --account st-someprof-1-gpu --job-dir "$test_tmp/job2" -- "$tool" >"$test_tmp/job2.sh"
(
  id=$((100 + ($$ + 1) % 9000))
  pbs_job_env "$id.pbshost" n1 n2
  export PBS_O_WORKDIR=$test_tmp/work OMPI_MCA_plm_rsh_agent=$(make_fake_ssh)
  timeout 180 bash "$test_tmp/job2.sh" >"$test_tmp/ar.out" 2>"$test_tmp/ar.err" \
    || fail "allreduce from the rendered PBS script failed: $(cat "$test_tmp/ar.out" "$test_tmp/ar.err")"
  assert_eq 8 "$(grep -c 'sum=36 expected=36 ok' "$test_tmp/ar.out")" "ranks that saw the right allreduce sum"
)
