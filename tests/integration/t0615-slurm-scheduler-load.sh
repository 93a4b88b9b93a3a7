#!/usr/bin/env bash
# The load hpclaunch puts on a scheduler, counted on the real test cluster: a PATH wrapper logs every squeue,
# scontrol and sacct call. `jobs` with 50 jobs in view (49 single jobs and a 50-task array) asks at most 2 times
# per refresh — one squeue for all, one sacct for what squeue has forgotten (MinJobAge; the test cluster has no
# accounting, so sacct fails and the job directories tell) — where it asked squeue and scontrol per job before
# (100 calls). `status` of the array asks once, and so does `status` of one job (squeue, then scontrol, before:
# every query asks the same way).
source "$(dirname "$0")/lib.sh"
need_hpclaunch
need_cluster
export XDG_STATE_HOME=$test_tmp/state
cd "$test_tmp"
submit() { submit_test_site test-perlmutter "$1" --account m1234_g "${@:2}" 2>/dev/null; }  # JOBDIR ARG...

# The wrapper: each call's argv appended to calls.log, then the real command.
mkdir -p "$test_tmp/bin"
for cmd in squeue scontrol sacct; do
  real=$(command -v "$cmd") || fail "$cmd is not installed"
  printf '#!/bin/bash\necho "%s $*" >>"%s"\nexec "%s" "$@"\n' "$cmd" "$test_tmp/calls.log" "$real" >"$test_tmp/bin/$cmd"
  chmod +x "$test_tmp/bin/$cmd"
done
counted() {  # COMMAND...: runs it with the wrapper first on PATH; its output in $out, the calls it made in $calls
  local rc=0
  : >"$test_tmp/calls.log"
  out=$(PATH="$test_tmp/bin:$PATH" "$@") || rc=$?
  calls=$(wc -l <"$test_tmp/calls.log")
  return $rc
}
trap 'rc=$?; scancel "${array:-0}" "${ids[@]}" 2>/dev/null; _lib_cleanup $rc' EXIT

ids=()
array=
for i in $(seq 1 49); do
  ids+=("$(submit "$test_tmp/job$i" --nodes 1 --gpus-per-node 1 --launcher srun -- true)")
done
array=$(submit "$test_tmp/array" --nodes 1 --gpus-per-node 1 --launcher srun --array 50 -- true)
[[ $array =~ ^[0-9]+$ ]] || fail "submit --array printed '$array', not a job id"

counted "$HPCLAUNCH" jobs || fail "jobs failed: $out"
assert_eq 51 "$(echo "$out" | wc -l)" "jobs' lines (a header and 50 rows)"
[ "$calls" -le 2 ] || fail "jobs asked the scheduler $calls times for 50 jobs (at most 2): $(cut -d" " -f1 "$test_tmp/calls.log" | sort | uniq -c | tr "\n" " ")"
assert_not_contains "$out" "?" "a row without a state"
assert_contains "$(echo "$out" | grep "^$array ")" "50 tasks:" "the array's row"
for id in "${ids[0]}" "${ids[48]}"; do
  case $(echo "$out" | grep "^$id ") in *PENDING*|*RUNNING*|*COMPLETING*|*COMPLETED*) ;;
    *) fail "row of job $id: $(echo "$out" | grep "^$id ")" ;; esac
done

counted "$HPCLAUNCH" status "$array" || fail "status of the array failed: $out"
assert_eq 51 "$(echo "$out" | wc -l)" "status lines of a 50-task array"
[ "$calls" -le 2 ] || fail "status of a 50-task array asked $calls times: $(cat "$test_tmp/calls.log")"
counted "$HPCLAUNCH" status "${ids[1]}" || fail "status of one job failed: $out"
assert_eq 1 "$calls" "calls of status of one job that squeue lists ($(cat "$test_tmp/calls.log"))"
assert_contains "$(cat "$test_tmp/calls.log")" "squeue -h -r -t all -j ${ids[1]} -O" "the one call"

# Once Slurm has forgotten the first jobs (MinJobAge), squeue leaves them out and sacct (absent here) is asked
# once for all of them; their rows say what their job directory shows.
wait_job "${ids[0]}" 300 >/dev/null
wait_until --every 0.5 120 "Slurm to forget job ${ids[0]} (MinJobAge)" '! scontrol show job "${ids[0]}"'
counted "$HPCLAUNCH" jobs || fail "jobs failed after MinJobAge: $out"
assert_eq 2 "$calls" "calls of jobs with forgotten jobs ($(cat "$test_tmp/calls.log"))"
assert_contains "$(sed -n 2p "$test_tmp/calls.log")" "sacct " "the second call"
assert_contains "$(echo "$out" | grep "^${ids[0]} ")" "finished (state unknown to scheduler; its output slurm-${ids[0]}.out is in the job directory)"

scancel "$array" "${ids[@]}" 2>/dev/null || true
echo "ok"
