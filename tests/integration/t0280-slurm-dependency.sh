#!/usr/bin/env bash
# `submit --after JOB[:ok|any|notok]` on the test cluster: the second job starts after the first and sees its
# result, `afternotok` of a success never starts (Slurm: DependencyNeverSatisfied) while that of a failure runs,
# a JOB from `hpclaunch jobs` (its directory) works as well as its id, and a dependency Slurm refuses is reported
# in its words with nothing left behind.
source "$(dirname "$0")/lib.sh"
need_hpclaunch
need_cluster
export XDG_STATE_HOME=$test_tmp/state  # this test's own job index
sites=$HPCLAUNCH_SOURCE_DIR/tests/integration/sites
cd "$test_tmp"
submit() {  # JOBDIR ARG... -- CMD: prints the job id
  local dir=$1
  shift
  "$HPCLAUNCH" submit --site test-shaped --site-file "$sites/test-shaped.yaml" --nodes 1 --time 5 --launcher srun \
    --gpus-per-node 1 --job-dir "$dir" "$@" 2>>"$test_tmp/submit.err"
}

a=$(submit "$test_tmp/a" -- bash -c 'sleep 4; touch '"$test_tmp"'/a-done') || fail "submit a: $(cat submit.err)"
b=$(submit "$test_tmp/b" --after "$a" -- test -f "$test_tmp/a-done") || fail "submit b: $(cat submit.err)"
c=$(submit "$test_tmp/c" --after "$test_tmp/a:notok" -- true) || fail "submit c: $(cat submit.err)"
assert_contains "$("$HPCLAUNCH" status "$test_tmp/b")" "after: afterok:$a"
assert_contains "$("$HPCLAUNCH" status "$test_tmp/c")" "after: afternotok:$a"  # the directory named the job
assert_contains "$(scontrol show job "$b")" "Dependency=afterok:${a}"
assert_contains "$("$HPCLAUNCH" jobs | grep "^$b ")" "after afterok:$a"  # `jobs` shows what a queued job waits for
assert_eq COMPLETED "$(wait_job "$a" 60)" "the first job"
assert_eq COMPLETED "$(wait_job "$b" 60)" "the job after it (it ran only once a-done existed)"
wait_until --every 0.5 20 "Slurm to see that c's dependency is never satisfied" \
  '"$HPCLAUNCH" status "$c" | grep DependencyNeverSatisfied'
assert_contains "$("$HPCLAUNCH" status "$c")" "PENDING (DependencyNeverSatisfied)" "afternotok of a success"
"$HPCLAUNCH" cancel "$c" 2>/dev/null

f=$(submit "$test_tmp/f" -- bash -c 'exit 3') || fail "submit f"
g=$(submit "$test_tmp/g" --after "$f:notok" -- true) || fail "submit g"
assert_eq FAILED "$(wait_job "$f" 60)" "the failing job"
assert_eq COMPLETED "$(wait_job "$g" 60)" "afternotok of a failure"

# A dependency Slurm cannot take (no such job, not even a number; Slurm 22.05 drops unknown numeric ids): refused
# in sbatch's words; no directory, no index entry.
lines=$(wc -l <"$XDG_STATE_HOME/hpclaunch/jobs")
assert_fails "Job dependency problem" "$HPCLAUNCH" submit --site test-shaped --site-file "$sites/test-shaped.yaml" \
  --nodes 1 --job-dir "$test_tmp/refused" --after nosuchjob -- true
[ ! -e "$test_tmp/refused" ] || fail "a refused submission left its directory"
assert_eq "$lines" "$(wc -l <"$XDG_STATE_HOME/hpclaunch/jobs")" "index lines after a refused submission"
assert_fails "--after: 'x:maybe' is not JOB" "$HPCLAUNCH" submit --site test-shaped --site-file "$sites/test-shaped.yaml" \
  --nodes 1 --after x:maybe -- true
echo ok
