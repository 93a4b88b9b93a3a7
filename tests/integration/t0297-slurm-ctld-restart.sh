#!/usr/bin/env bash
# slurmctld restarted while jobs run and while `wait`, `logs --follow` and `jobs` watch them: a 2-node agent job (4
# ranks) and a 1-node srun job keep running through the controller's stop (SIGTERM, down 12 s, several times the
# watchers' own Slurm retries) and start (state recovered); `wait` and `logs --follow` note the silence and carry
# on to COMPLETED with every line; `jobs` during the outage lists every row and names the failing command once
# (exit 1), and after it gives the states again. The agent job's directory and output never hold its rendezvous
# secret. Also: two and twenty `submit`s at once from the same directory on Slurm, each with its own directory, job
# id and index row.
source "$(dirname "$0")/lib.sh"
need_hpclaunch
need_cluster
cd "$test_tmp"
hl() { "$HPCLAUNCH" "$@"; }
submit() { submit_test_site test-perlmutter "$1" --account m1234_g "${@:2}" 2>/dev/null; }  # JOBDIR ARG...
mkdir -p bin
real_od=$(command -v od)
printf '#!/bin/bash\n"%s" "$@" | tee -a "%s"\n' "$real_od" "$test_tmp/od.out" >bin/od  # learns the job's secret
chmod +x bin/od

# The watchers (wait, logs --follow, jobs) read a copy of slurm.conf with MessageTimeout=2 (client_conf): a Slurm
# command retries a controller that does not answer for about MessageTimeout (~2 s here; ~18 s at the cluster's
# default 10, which made the outage 40 s and the jobs 60 s). The jobs and their sruns keep the cluster's own.
watch_conf=$test_tmp/watch.conf
client_conf "$watch_conf"
# Seconds without slurmctld: a `wait` poll whose squeue answered just before the stop spends up to ~2 s in its
# scontrol call (whose failure only loses the detail), and its next squeue fails after ~2 s more: over twice that,
# so that one squeue of `wait` fails whenever the stop comes (a 25 s outage against 18 s retries, under load, once
# passed without any). The jobs tick for three times the outage, so they run through the stop and the start.
down=12
ticks=36
id=$(PATH=$test_tmp/bin:$PATH submit "$test_tmp/agent" --nodes 2 --gpus-per-node 2 --launcher agent -- \
  bash -c "for i in \$(seq 1 $ticks); do echo \"rank \$RANK tick \$i\"; sleep 1; done")
id2=$(submit "$test_tmp/srun" --nodes 1 --gpus-per-node 2 --launcher srun -- \
  bash -c "for i in \$(seq 1 $ticks); do echo \"task \$RANK tick \$i\"; sleep 1; done")
[[ $id =~ ^[0-9]+$ ]] && [[ $id2 =~ ^[0-9]+$ ]] || fail "submit printed '$id' and '$id2', not job ids"
out=$test_tmp/agent/slurm-$id.out
wait_until --every 0.5 120 "the agent job to start" 'hl status "$id"; grep -q "tick 2$" "$out"'

SLURM_CONF=$watch_conf timeout 300 "$HPCLAUNCH" wait --interval 0.5 "$id" >"$test_tmp/wait.out" \
  2>"$test_tmp/wait.err" &
waiter=$!
SLURM_CONF=$watch_conf timeout 300 "$HPCLAUNCH" logs --follow --interval 0.2 "$id" >"$test_tmp/follow.out" \
  2>"$test_tmp/follow.err" &
follower=$!
sleep 1
ctld=$(cat "$HPCLAUNCH_CLUSTER_DIR/slurmctld.pid")
"$HPCLAUNCH_SOURCE_DIR/scripts/test-cluster.sh" restart-ctld "$HPCLAUNCH_CLUSTER_DIR" "$down" >"$test_tmp/restart.out" 2>&1 &
restarter=$!
# While the controller is down: `jobs` lists both rows, each state unknown, one error naming the command.
wait_until --every 0.05 30 "slurmctld (pid $ctld) to stop" '! kill -0 "$ctld"'
rc=0
SLURM_CONF=$watch_conf timeout 120 "$HPCLAUNCH" jobs >"$test_tmp/jobs-down.out" 2>"$test_tmp/jobs-down.err" \
  || rc=$?
wait "$restarter" || fail "the controller did not come back: $(cat "$test_tmp/restart.out")"
assert_eq 1 "$rc" "exit code of jobs while slurmctld is down ($(cat "$test_tmp/jobs-down.out"))"
assert_eq 1 "$(grep -c "error:" "$test_tmp/jobs-down.err")" "errors from jobs while slurmctld is down ($(cat "$test_tmp/jobs-down.err"))"
assert_contains "$(cat "$test_tmp/jobs-down.err")" "squeue" "the failing command named"
assert_eq 2 "$(grep -c "^$id .*? (see below)\|^$id2 .*? (see below)" "$test_tmp/jobs-down.out")" "rows listed while slurmctld is down"

wait "$waiter" || fail "wait exited $? across the restart: $(cat "$test_tmp/wait.out" "$test_tmp/wait.err")"
wait "$follower" || fail "logs --follow exited $? across the restart: $(cat "$test_tmp/follow.err")"
assert_eq "$id COMPLETED" "$(tail -n 1 "$test_tmp/wait.out")" "wait's last line after the restart"
assert_contains "$(cat "$test_tmp/follow.err")" "COMPLETED" "logs --follow's end"
for r in 0 1 2 3; do
  assert_eq "$ticks" "$(grep -c "rank $r tick " "$test_tmp/follow.out")" "rank $r's lines seen by logs --follow"
done
assert_contains "$(cat "$test_tmp/wait.err")" "hpclaunch: note: the scheduler did not answer" "wait's note on the silence"
assert_contains "$(cat "$test_tmp/wait.err")" "the scheduler answers again" "wait's note after the silence"
out2=$(timeout 300 "$HPCLAUNCH" wait --interval 0.5 "$id2" 2>&1) || fail "the srun job did not complete: $out2"
assert_eq "$ticks" "$(grep -c "task 1 tick " "$test_tmp/srun/slurm-$id2.out")" "the srun job's lines of task 1"
jobs_after=$(hl jobs) || fail "jobs after the restart exited $?"
assert_contains "$jobs_after" "COMPLETED" "jobs after the restart"
assert_not_contains "$jobs_after" "?" "jobs after the restart"
secret=$(tr -d ' \n' <"$test_tmp/od.out")
assert_eq 32 "${#secret}" "length of the agent job's secret"
found=$(grep -rl "$secret" "$test_tmp/agent" "$test_tmp/follow.out" || true)
[ -z "$found" ] || fail "the rendezvous secret is written in: $found"
assert_eq 700 "$(stat -c %a "$test_tmp/agent")" "mode of the job directory"
note "slurmctld restarted (down $down s) under 2 running jobs, wait and logs --follow: lost lines 0, lost jobs 0"

# Two and twenty submits at once from one directory on Slurm.
mkdir -p "$test_tmp/burst"
cd "$test_tmp/burst"
pids=()
for i in $(seq 1 22); do
  "$HPCLAUNCH" submit --site test-perlmutter --site-file "$HPCLAUNCH_SOURCE_DIR/tests/integration/sites/test-perlmutter.yaml" \
    --account m1234_g --nodes 1 --gpus-per-node 1 --launcher srun --name burst -- true >"$test_tmp/b$i.out" 2>&1 &
  pids+=($!)
done
failed=0
for p in "${pids[@]}"; do wait "$p" || failed=$((failed + 1)); done
[ "$failed" = 0 ] || fail "$failed of 22 simultaneous submits failed: $(cat "$test_tmp"/b*.out | grep error | head -3)"
dirs=$(find "$test_tmp/burst/hpclaunch-jobs" -mindepth 1 -maxdepth 1 -type d -name 'burst-*' | sort)
assert_eq 22 "$(echo "$dirs" | grep -c .)" "job directories of 22 simultaneous submits"
assert_eq 22 "$(for d in $dirs; do sed -n 's/.*"job_id": "\(.*\)".*/\1/p' "$d/job.json"; done | sort -u | wc -l)" "distinct job ids"
assert_eq "$dirs" "$(index_dirs "$XDG_STATE_HOME/hpclaunch/jobs" | grep "/burst/" | sort)" "index rows of the 22 submits"
note "22 simultaneous submits to Slurm: 22 directories, 22 job ids, 22 index rows, lost: 0"
# The jobs (`true`) end before the test does: one still writing its output into $test_tmp made the cleanup's rm
# fail ("Directory not empty") in a full run under load.
for d in $dirs; do wait_job "$(sed -n 's/.*"job_id": "\(.*\)".*/\1/p' "$d/job.json")" 120 >/dev/null; done
