#!/usr/bin/env bash
# The local site's requeue (`submit --requeue`): its runner runs the job's script again when it exits 99 (a worker's
# "saved, requeue me"), at most --max-requeues times, with HPCLAUNCH_RESTART_COUNT=N, and so each task of an array;
# `cancel --signal USR1` is the warning the script's launch passes on to the job; `cancel` of such a job (or of one
# task) runs it no more.
source "$(dirname "$0")/lib.sh"
need_hpclaunch
for v in $(env | grep -oE '^(SLURM|PBS|PMI|OMPI_COMM|HPCLAUNCH_)[A-Z_]*' || true); do unset "$v"; done
unset MASTER_ADDR MASTER_PORT
cd "$test_tmp"
submit=("$HPCLAUNCH" submit --site local --nodes 1 --gpus-per-node 1 --launcher srun)
count_runs='echo "run ${HPCLAUNCH_RESTART_COUNT:-0}" >>"$0"'

# Exit 99 every time: 1 run and 2 requeues, then the job ends with 99.
rc=0
timeout 120 "${submit[@]}" --requeue --max-requeues 2 --job-dir "$test_tmp/always" -- \
  bash -c "$count_runs; exit 99" "$test_tmp/always.runs" >"$test_tmp/out" 2>&1 || rc=$?
assert_eq 99 "$rc" "exit code of a job that asked for a requeue on every run"
assert_eq "run 0 run 1 run 2" "$(xargs <"$test_tmp/always.runs")" "the runs (HPCLAUNCH_RESTART_COUNT of each)"
out=$(cat "$test_tmp/out")
assert_contains "$out" "requeue 1 of 2) after exit 99"
assert_contains "$out" "requeue 2 of 2) after exit 99"
assert_contains "$out" "used its 2 requeue(s); not requeueing"
assert_contains "$("$HPCLAUNCH" status "$test_tmp/always" 2>&1)" "99"

# Without --requeue, 99 is an exit code like any other.
rc=0
timeout 120 "${submit[@]}" --job-dir "$test_tmp/plain" -- bash -c "$count_runs; exit 99" "$test_tmp/plain.runs" \
  >"$test_tmp/out" 2>&1 || rc=$?
assert_eq 99 "$rc" "exit code of a job without --requeue"
assert_eq "run 0" "$(xargs <"$test_tmp/plain.runs")" "a job without --requeue runs once"
assert_not_contains "$(cat "$test_tmp/out")" "requeueing"

# The warning: the first run saves on USR1 and exits 99 (as hpclaunch-train and the Python worker do); the second,
# from its "checkpoint", finishes.
warned='echo "run ${HPCLAUNCH_RESTART_COUNT:-0}" >>"$0"
if [ -z "$HPCLAUNCH_RESTART_COUNT" ]; then trap "echo saved >>\"\$0\"; exit 99" USR1; touch "$0.started"
  while :; do sleep 0.1; done; fi'
"${submit[@]}" --requeue --detach --job-dir "$test_tmp/warned" -- bash -c "$warned" "$test_tmp/warned.runs" \
  >/dev/null 2>"$test_tmp/err" || fail "submit --detach: $(cat "$test_tmp/err")"
wait_until 60 "the first run to start" '[ -f "$test_tmp/warned.runs.started" ]'
"$HPCLAUNCH" cancel --signal USR1 "$test_tmp/warned" 2>"$test_tmp/err" || fail "cancel --signal: $(cat "$test_tmp/err")"
assert_contains "$(cat "$test_tmp/err")" "hpclaunch: sent signal USR1 to job local-"
timeout 120 "$HPCLAUNCH" wait "$test_tmp/warned" >/dev/null 2>"$test_tmp/err" || fail "the warned job: $(cat "$test_tmp/err")"
assert_eq "run 0 saved run 1" "$(xargs <"$test_tmp/warned.runs")" "the warned job's runs"
assert_contains "$(cat "$test_tmp/warned/output.log")" "hpclaunch: SIGUSR1: passed on to the job"
assert_contains "$(cat "$test_tmp/warned/output.log")" "requeue 1 of 3) after exit 99"  # the profile's limit

# `cancel` ends a job that requeues: its runner, told too, runs it no more (the script dies of SIGTERM; the
# command's 99 on it does not count).
on_term='echo "run ${HPCLAUNCH_RESTART_COUNT:-0}" >>"$0"; trap "exit 99" TERM; touch "$0.started"
while :; do sleep 0.1; done'
"${submit[@]}" --requeue --detach --job-dir "$test_tmp/cancelled" -- bash -c "$on_term" "$test_tmp/cancelled.runs" \
  >/dev/null 2>"$test_tmp/err" || fail "submit --detach: $(cat "$test_tmp/err")"
wait_until 60 "the job to start" '[ -f "$test_tmp/cancelled.runs.started" ]'
"$HPCLAUNCH" cancel "$test_tmp/cancelled" 2>"$test_tmp/err" || fail "cancel: $(cat "$test_tmp/err")"
timeout 120 "$HPCLAUNCH" wait "$test_tmp/cancelled" >/dev/null 2>&1 || true
assert_eq "run 0" "$(xargs <"$test_tmp/cancelled.runs")" "a cancelled job that exited 99 runs once"
assert_not_contains "$(cat "$test_tmp/cancelled/output.log")" "requeueing"

# An array's tasks each run again on 99, on their own budget; `cancel JOB_I` ends that task (its script dies of
# SIGTERM, whatever the command exits on it), which runs no more, while the others go on.
rc=0
timeout 120 "${submit[@]}" --array 2 --max-concurrent 2 --requeue --max-requeues 1 --job-dir "$test_tmp/arr" -- \
  bash -c "$count_runs; exit 99" "$test_tmp/arr.runs" >"$test_tmp/out" 2>&1 || rc=$?
assert_eq 99 "$rc" "exit code of an array whose tasks asked for a requeue on every run"
assert_eq "run 0 run 0 run 1 run 1" "$(sort "$test_tmp/arr.runs" | xargs)" "the array's runs: each task twice"
assert_contains "$(cat "$test_tmp/out")" "hpclaunch: requeueing task 1 ("
assert_contains "$(cat "$test_tmp/out")" "hpclaunch: task 0 ("
task_term='echo "run ${HPCLAUNCH_RESTART_COUNT:-0}" >>"$0.$HPCLAUNCH_ARRAY_TASK"; trap "exit 99" TERM
touch "$0.$HPCLAUNCH_ARRAY_TASK.started"; [ "$HPCLAUNCH_ARRAY_TASK" = 1 ] || exit 0; while :; do sleep 0.1; done'
id=$("${submit[@]}" --array 2 --max-concurrent 2 --requeue --detach --job-dir "$test_tmp/arr2" -- \
  bash -c "$task_term" "$test_tmp/arr2" 2>"$test_tmp/err") || fail "submit --detach: $(cat "$test_tmp/err")"
wait_until 60 "task 1 to start" '[ -f "$test_tmp/arr2.1.started" ]'
"$HPCLAUNCH" cancel "${id}_1" 2>"$test_tmp/err" || fail "cancel ${id}_1: $(cat "$test_tmp/err")"
timeout 120 "$HPCLAUNCH" wait "$test_tmp/arr2" >/dev/null 2>&1 || true
assert_eq "run 0" "$(xargs <"$test_tmp/arr2.1")" "a cancelled task that exited 99 runs once"
assert_eq "run 0" "$(xargs <"$test_tmp/arr2.0")" "the other task ran once and completed"
assert_not_contains "$(cat "$test_tmp/arr2/output.log")" "requeueing"

# What cannot be sent, and to what.
assert_fails "--signal: 'KILL' is not a signal a job can catch" "$HPCLAUNCH" cancel --signal KILL "$test_tmp/always"
assert_fails "is not running on this machine" "$HPCLAUNCH" cancel --signal USR1 "$test_tmp/always"
echo "ok"
