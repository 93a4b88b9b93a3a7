#!/usr/bin/env bash
# Following Slurm jobs on the real test cluster: `status` from squeue (sacct or the job directory once squeue forgets) (COMPLETED, FAILED with its exit
# code, RUNNING, CANCELLED), `wait` (exit 0 only when completed), `logs` (--rank keeps one rank's [host:rank]
# lines of the agent; --follow ends with the job), `cancel` (scancel), `jobs`; and a controller that cannot be
# reached (SLURM_CONF at a dead port) gives one error naming the command, never a state.
source "$(dirname "$0")/lib.sh"
need_hpclaunch
need_cluster
export XDG_STATE_HOME=$test_tmp/state
cd "$test_tmp"
hl() { "$HPCLAUNCH" "$@"; }
submit() { submit_test_site test-perlmutter "$1" --account m1234_g "${@:2}" 2>/dev/null; }  # JOBDIR ARG...

# 2 nodes x 4 workers under the agent: 8 ranks, each prints two lines.
id=$(submit "$test_tmp/ok" --nodes 2 --launcher agent -- bash -c 'echo "hello from rank $RANK"; sleep 2; echo "bye from rank $RANK"')
[[ $id =~ ^[0-9]+$ ]] || fail "submit printed '$id', not a job id"
first=$(hl status "$id") || fail "status failed: $first"
case ${first#"$id "} in PENDING*|RUNNING|COMPLETING|COMPLETED) ;; *) fail "first status of a fresh job: '$first'" ;; esac
out=$(timeout 300 "$HPCLAUNCH" wait --interval 0.5 "$id") || fail "wait exited $? for a job that should complete: $out"
assert_eq "$id COMPLETED" "$(echo "$out" | tail -n 1)" "wait's last line"
assert_eq "$id COMPLETED" "$(hl status "$id")" "status after the end"
assert_eq "$id COMPLETED" "$(hl status "$test_tmp/ok")" "status by job directory"
all=$(hl logs "$id")
for r in 0 1 2 3 4 5 6 7; do assert_contains "$all" ":$r] hello from rank $r" "logs"; done
only=$(hl logs "$id" --rank 5)
assert_eq "hello from rank 5
bye from rank 5" "$(echo "$only" | sed 's/^\[[^]]*\] //')" "logs --rank 5"

# A failing job: FAILED with its exit code; wait exits 1.
id_bad=$(submit "$test_tmp/bad" --nodes 1 --gpus-per-node 1 --launcher srun -- bash -c 'exit 3')
rc=0; timeout 300 "$HPCLAUNCH" wait --interval 0.5 "$id_bad" >/dev/null 2>"$test_tmp/err" || rc=$?
assert_eq 1 "$rc" "wait's exit code for a failed job"
assert_eq "$id_bad FAILED (exit 3)" "$(hl status "$id_bad")" "status of a failed job"

# A long job: logs --follow runs while it runs; cancel ends it; follow and wait end with CANCELLED.
id_long=$(submit "$test_tmp/long" --nodes 2 --launcher agent -- bash -c 'for i in $(seq 1 300); do echo "tick $i"; sleep 1; done')
wait_until --every 0.5 --on-timeout "scancel $id_long" 60 "the long job to run and print tick 2" \
  'hl status "$id_long" | grep -x "$id_long RUNNING" && grep "tick 2" "$test_tmp/long/slurm-$id_long.out"'
timeout 120 "$HPCLAUNCH" logs --follow --rank 0 --interval 0.2 "$id_long" >"$test_tmp/follow.out" 2>"$test_tmp/follow.err" &
follow_pid=$!
sleep 2
hl cancel "$id_long" 2>/dev/null || fail "cancel failed"
rc=0; timeout 120 "$HPCLAUNCH" wait --interval 0.5 "$id_long" >/dev/null 2>"$test_tmp/err" || rc=$?
assert_eq 1 "$rc" "wait's exit code for a cancelled job"
assert_contains "$(hl status "$id_long")" "$id_long CANCELLED"
wait "$follow_pid" || fail "logs --follow exited $? (stderr: $(cat "$test_tmp/follow.err"))"
assert_contains "$(cat "$test_tmp/follow.out")" ":0] tick 2" "logs --follow --rank 0"
assert_not_contains "$(cat "$test_tmp/follow.out")" ":1] tick" "logs --follow --rank 0"
assert_contains "$(cat "$test_tmp/follow.err")" "CANCELLED" "logs --follow names the end"
assert_eq "" "$(squeue -h -j "$id_long" -o %T)" "squeue still lists the cancelled job as active"

# jobs: the three jobs with site, nodes and state.
out=$(hl jobs) || fail "jobs failed: $out"
assert_contains "$(echo "$out" | grep "^$id ")" "COMPLETED"
assert_contains "$(echo "$out" | grep "^$id ")" "test-perlmutter"
assert_contains "$(echo "$out" | grep "^$id_bad ")" "FAILED (exit 3)"
assert_contains "$(echo "$out" | grep "^$id_long ")" "CANCELLED"

# A controller that cannot be reached: one error line naming the command, exit 1, nothing on stdout. The clients'
# MessageTimeout bounds how long each Slurm command retries the dead port before it fails (18 s at the default 10:
# 54 s for the four commands below, all spent in Slurm's retries); client_conf's 2 s fails them the same way, sooner.
client_conf "$test_tmp/dead.conf" 's/^SlurmctldPort=.*/SlurmctldPort=1/'
rc=0; out=$(SLURM_CONF=$test_tmp/dead.conf timeout 120 "$HPCLAUNCH" status "$id" 2>"$test_tmp/err") || rc=$?
assert_eq 1 "$rc" "status exit code with an unreachable controller"
assert_eq "" "$out" "status printed a state with an unreachable controller"
assert_eq 1 "$(wc -l <"$test_tmp/err")" "error lines"
assert_contains "$(cat "$test_tmp/err")" "hpclaunch: error: squeue -h -r -t all -j $id -O JobArrayID:40|,State:24|,Reason:200|,exit_code:12|: failed (exit 1): slurm_load_jobs error"
assert_contains "$(cat "$test_tmp/err")" "check that slurmctld is up"
rc=0; SLURM_CONF=$test_tmp/dead.conf timeout 120 "$HPCLAUNCH" wait "$id" >/dev/null 2>"$test_tmp/err" || rc=$?
assert_eq 1 "$rc" "wait exit code with an unreachable controller"
assert_contains "$(cat "$test_tmp/err")" "squeue -h -r -t all -j $id -O JobArrayID:40|,State:24|,Reason:200|,exit_code:12|: failed"
assert_fails "scancel $id: failed" env SLURM_CONF="$test_tmp/dead.conf" "$HPCLAUNCH" cancel "$id"
rc=0; SLURM_CONF=$test_tmp/dead.conf "$HPCLAUNCH" jobs >"$test_tmp/out" 2>"$test_tmp/err" || rc=$?
assert_eq 1 "$rc" "jobs exit code with an unreachable controller"
assert_contains "$(cat "$test_tmp/out")" "? (see below)"
assert_eq 1 "$(wc -l <"$test_tmp/err")" "jobs: one error line for one unreachable controller"

# Without an accounting database Slurm forgets a finished job after MinJobAge (30 s on the test cluster): status
# then says so honestly from the job directory, and wait exits 3 (not 0: the outcome is unknown).
wait_until --every 0.5 120 "Slurm to forget job $id (MinJobAge)" '! scontrol show job "$id"'
assert_eq "$id finished (state unknown to scheduler; its output slurm-$id.out is in the job directory)" \
  "$(hl status "$id")" "status of a job Slurm has forgotten"
rc=0; hl wait "$id" >/dev/null 2>&1 || rc=$?
assert_eq 3 "$rc" "wait's exit code for a job Slurm has forgotten"
