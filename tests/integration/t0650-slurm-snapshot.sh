#!/usr/bin/env bash
# `submit --snapshot` on the test cluster: a job held pending (it waits for another) while its script is edited runs
# the code as it was at submit, from the submit directory's place in the copy; job.json, `status`, `status --json`
# and the report name the commit and the dirty tree; a job requeued (`scontrol requeue`) after the tree changed
# runs the same copy again; an exclude leaves its folder out.
source "$(dirname "$0")/lib.sh"
need_hpclaunch
need_cluster
need_cmd git
export XDG_STATE_HOME=$test_tmp/state GIT_CONFIG_NOSYSTEM=1 GIT_CONFIG_GLOBAL=/dev/null
export GIT_AUTHOR_NAME=t GIT_AUTHOR_EMAIL=t@example.org GIT_COMMITTER_NAME=t GIT_COMMITTER_EMAIL=t@example.org
sites=$HPCLAUNCH_SOURCE_DIR/tests/integration/sites
submit() {  # JOBDIR ARG... -- CMD: prints the job id
  local dir=$1
  shift
  "$HPCLAUNCH" submit --site test-shaped --site-file "$sites/test-shaped.yaml" --nodes 1 --time 5 --launcher srun \
    --gpus-per-node 1 --job-dir "$dir" "$@" 2>>"$test_tmp/submit.err"
}
field() { python3 -c 'import json, sys; d = json.load(open(sys.argv[1])); print(json.dumps(eval("d" + sys.argv[2])))' "$@"; }

repo=$test_tmp/repo
mkdir -p "$repo/exp" "$repo/data"
cd "$repo"
git init -q .
echo 'echo "version 1"' >train.sh
touch exp/.keep data/big.bin
git add . && git commit -qm one
head=$(git rev-parse HEAD)
echo 'echo "version 2 (uncommitted)"' >train.sh  # the tree is dirty at submit

# 1. Held pending behind a job that waits for a file; the script is edited meanwhile; the job runs the old one.
cd "$test_tmp"
a=$(submit "$test_tmp/a" -- bash -c "while [ ! -e '$test_tmp/go' ]; do sleep 0.2; done") || fail "submit a: $(cat submit.err)"
cd "$repo/exp"
b=$(submit "$test_tmp/b" --snapshot --snapshot-exclude data/ --after "$a" -- \
  bash -c 'echo "cwd $(pwd)"; bash ../train.sh; ls -A ..') || fail "submit b: $(cat "$test_tmp/submit.err")"
assert_eq PENDING "$(job_state "$b")" "the snapshot job's state while the job before it runs"
echo 'echo "version 3 (edited after submit)"' >"$repo/train.sh"
touch "$test_tmp/go"
assert_eq COMPLETED "$(wait_job "$a" 60)" "the job before it"
assert_eq COMPLETED "$(wait_job "$b" 120)" "the snapshot job"
out=$(cat "$test_tmp/b/slurm-$b.out")
assert_contains "$out" "cwd $test_tmp/b/snapshot/exp"
assert_contains "$out" "version 2 (uncommitted)"
assert_not_contains "$out" "version 3" "the held job's output"
assert_not_contains "$out" "data" "the held job's listing (data/ excluded)"
assert_eq "\"$head\"" "$(field "$test_tmp/b/job.json" '["snapshot"]["commit"]')" "job.json's commit"
assert_eq true "$(field "$test_tmp/b/job.json" '["snapshot"]["dirty"]')" "job.json's dirty"
assert_contains "$("$HPCLAUNCH" status "$b")" "  snapshot: commit ${head:0:12} with uncommitted changes; 2 files"
"$HPCLAUNCH" status --json "$b" >"$test_tmp/status.json"
assert_eq true "$(field "$test_tmp/status.json" '["snapshot"]["dirty"]')" "status --json's dirty"
"$HPCLAUNCH" report "$b" --json >"$test_tmp/report.json" || fail "report --json"
assert_eq "\"$head\"" "$(field "$test_tmp/report.json" '["snapshot"]["commit"]')" "report --json's commit"
"$HPCLAUNCH" report "$b" -o "$test_tmp/report.html" >/dev/null || fail "report"
assert_contains "$(cat "$test_tmp/report.html")" "<th>snapshot</th><td>commit ${head:0:12} with uncommitted changes;"

# 2. Requeued after the tree changed: the second run runs the same copy.
c=$(submit "$test_tmp/c" --snapshot --requeue -- bash -c \
  'echo "run ${SLURM_RESTART_COUNT:-0}: $(bash ../train.sh)" >>"$0"; [ "${SLURM_RESTART_COUNT:-0}" -ge 1 ] || sleep 300' \
  "$test_tmp/c.runs") || fail "submit c: $(cat "$test_tmp/submit.err")"
wait_until --every 0.5 120 "the first run of job $c" 'grep -q "^run 0" "$test_tmp/c.runs" 2>/dev/null'
echo 'echo "version 4 (edited while it ran)"' >"$repo/train.sh"
scontrol requeue "$c" || fail "scontrol requeue $c"
assert_eq COMPLETED "$(wait_job "$c" 300)" "the requeued snapshot job"
assert_eq "run 0: version 3 (edited after submit)
run 1: version 3 (edited after submit)" "$(cat "$test_tmp/c.runs")" "the runs of the requeued job"
echo ok
