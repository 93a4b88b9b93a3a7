#!/usr/bin/env bash
# NCI Gadi without a PBS server (none is packaged for Debian): the script `hpclaunch render` writes for Gadi is run
# as PBS runs it, with a real mpirun and a $PBS_NODEFILE that lists each host once per CPU, as NCI's multi-node
# recipe walks it (48 lines a node). By slots, all 8 ranks would start on the first node (ranks 4-7 with no GPU,
# node 2 idle): the rendered line must put 4 on each. Then `submit` of a sweep sends one job per task, chained for
# --max-concurrent, to a stand-in qsub that records its command lines (Gadi takes no PBS job arrays).
source "$(dirname "$0")/lib.sh"
need_hpclaunch
source "$(dirname "$0")/lib-mpi.sh"
sites=$HPCLAUNCH_SOURCE_DIR/tests/integration/sites

mkdir -p "$test_tmp/work"
cd "$test_tmp/work"
report='echo "task $RANK $LOCAL_RANK $WORLD_SIZE ${FAKE_SSH_HOST:-head}"'
"$HPCLAUNCH" render --site test-gadi --site-file "$sites/test-gadi.yaml" --nodes 2 --account ab01 \
  --job-dir "$test_tmp/job" -- sh -c "$report" >"$test_tmp/job.sh"
assert_contains "$(cat "$test_tmp/job.sh")" '#PBS -l storage=scratch/ab01+gdata/ab01'
(
  id=$((100 + $$ % 9000))
  nodefile=()
  for host in n1 n2; do for _ in $(seq 48); do nodefile+=("$host"); done; done
  pbs_job_env "$id.gadi-pbs" "${nodefile[@]}"
  export PBS_O_WORKDIR=$test_tmp/work OMPI_MCA_plm_rsh_agent=$(make_fake_ssh)
  cd "$HOME"
  timeout 180 bash "$test_tmp/job.sh" >"$test_tmp/run.out" 2>"$test_tmp/run.err" \
    || fail "the rendered Gadi script failed: $(cat "$test_tmp/run.out" "$test_tmp/run.err")"
  expected=""
  for r in 0 1 2 3 4 5 6 7; do
    expected+="$r $((r % 4)) 8 n$((r / 4 + 1))"$'\n'
  done
  assert_eq "${expected%$'\n'}" "$(lines_with "$test_tmp/run.out" 'task ' | sort -n)" \
    "ranks (RANK LOCAL_RANK WORLD_SIZE NODE) from a nodefile with a line per CPU"
)

# A sweep on Gadi: no #PBS -J line anywhere, one script per task.
out=$("$HPCLAUNCH" render --site test-gadi --site-file "$sites/test-gadi.yaml" --account ab01 --sweep lr=0.1,0.2,0.3 \
  --max-concurrent 2 --job-dir "$test_tmp/sweep-render" -- python train.py 2>"$test_tmp/render.err")
assert_not_contains "$out" "#PBS -J"
assert_eq 3 "$(grep -c '^#!/bin/bash$' <<<"$out")" "scripts rendered for 3 tasks"
assert_contains "$(cat "$test_tmp/render.err")" "test-gadi refuses job arrays: submit sends each of the 3 tasks as a job of its own"

# submit: a stand-in qsub (no PBS server here) that records each command line and answers a job id.
mkdir -p "$test_tmp/bin"
cat >"$test_tmp/bin/qsub" <<'QSUB'
#!/bin/sh
n=$(($(wc -l <"$QSUB_LOG" 2>/dev/null || echo 0) + 1001))
echo "$*" >>"$QSUB_LOG"
echo "$n.gadi-pbs"
QSUB
chmod +x "$test_tmp/bin/qsub"
export QSUB_LOG=$test_tmp/qsub.log
ids=$(PATH=$test_tmp/bin:$PATH "$HPCLAUNCH" submit --site test-gadi --site-file "$sites/test-gadi.yaml" --account ab01 \
  --sweep lr=0.1,0.2,0.3 --max-concurrent 2 --job-dir "$test_tmp/sweep" -- python train.py 2>"$test_tmp/submit.err") \
  || fail "submit of a Gadi sweep failed: $(cat "$test_tmp/submit.err")"
assert_eq "1001.gadi-pbs 1002.gadi-pbs 1003.gadi-pbs" "$(echo $ids)" "one job id per task"
assert_eq 3 "$(wc -l <"$QSUB_LOG")" "qsub calls"
assert_not_contains "$(cat "$QSUB_LOG")" "-J"
assert_eq "-W depend=afterany:1001.gadi-pbs $test_tmp/sweep/tasks/2/job.sh" "$(sed -n 3p "$QSUB_LOG")" \
  "the third task waits for the first (--max-concurrent 2)"
assert_contains "$(cat "$test_tmp/sweep/tasks/1/job.sh")" "export HPCLAUNCH_SWEEP_LR=0.2"
assert_contains "$(cat "$test_tmp/sweep/tasks/1/job.json")" '"job_id": "1002.gadi-pbs"'
assert_contains "$(cat "$test_tmp/submit.err")" "submitted task 2 as job 1003.gadi-pbs"

# The sweep's directory records the array (plan.json, each task's task.json, the three jobs in job.json) and is
# listed once in the job index, as an array job is.
assert_contains "$(cat "$test_tmp/sweep/job.json")" '"task_job_ids"'
assert_contains "$(cat "$test_tmp/sweep/tasks/2/task.json")" '"lr"'
assert_eq 1 "$(grep -c sweep "$XDG_STATE_HOME/hpclaunch/jobs")" "index rows of the sweep"
cat >"$test_tmp/bin/qstat" <<'QSTAT'
#!/bin/sh
echo "$*" >>"$QSTAT_LOG"
for id in "$@"; do  # the jobs asked for, each as qstat -f writes it
  case $id in
    1001.gadi-pbs) printf 'Job Id: 1001.gadi-pbs\n    job_state = F\n    Exit_status = 0\n' ;;
    1002.gadi-pbs) printf 'Job Id: 1002.gadi-pbs\n    job_state = R\n' ;;
    1003.gadi-pbs) printf 'Job Id: 1003.gadi-pbs\n    job_state = H\n' ;;
  esac
done
QSTAT
cat >"$test_tmp/bin/qdel" <<'QDEL'
#!/bin/sh
echo "qdel $*" >>"$QSTAT_LOG"
QDEL
chmod +x "$test_tmp/bin/qstat" "$test_tmp/bin/qdel"
export QSTAT_LOG=$test_tmp/qstat.log
hl() { PATH=$test_tmp/bin:$PATH "$HPCLAUNCH" "$@"; }
out=$(hl status "$test_tmp/sweep") || fail "status of the Gadi sweep failed: $out"
assert_eq "1001.gadi-pbs 3 tasks: 1 running, 1 pending, 1 completed" "$(echo "$out" | head -1)" "the sweep's status"
assert_contains "$(echo "$out" | grep '1003.gadi-pbs')" "lr=0.3" "task 2's line"
assert_eq "-x -f -t 1001.gadi-pbs 1002.gadi-pbs 1003.gadi-pbs" "$(tail -1 "$QSTAT_LOG")" "one qstat for the three jobs"
assert_eq "1002.gadi-pbs R" "$(hl status 1002.gadi-pbs)" "a task by its own job id"
assert_contains "$(hl jobs)" "3 tasks: 1 running, 1 pending, 1 completed" "the sweep's row in jobs"
hl cancel "$test_tmp/sweep" >/dev/null 2>&1 || fail "cancel of the Gadi sweep failed"
assert_eq "qdel 1001.gadi-pbs 1002.gadi-pbs 1003.gadi-pbs" "$(tail -1 "$QSTAT_LOG")" "cancel: one qdel of the three jobs"
echo ok
