#!/usr/bin/env bash
# `hpclaunch report` of Slurm jobs on the test cluster: what the scheduler says the job used comes from one
# `sacct -j ID` over its steps. The page and --json say what sacct answers for this job, asked here as the test
# cluster's own sacct: with accounting, its elapsed time; without (the test cluster has no accounting storage,
# docs/TEST-CLUSTER.md), "not recorded (sacct: WHAT IT SAYS)" in one line. An array's tasks are asked in one sacct
# (a sacct on PATH before the cluster's counts the calls), and each task's page says what sacct answered for it.
source "$(dirname "$0")/lib.sh"
need_hpclaunch
need_cluster
cd "$test_tmp"
submit() { submit_test_site test-perlmutter "$1" --account m1234_g "${@:2}"; }  # JOBDIR ARG...: prints the id

# Every sacct hpclaunch runs, logged, then the cluster's own.
real_sacct=$(command -v sacct) || fail "no sacct on PATH after need_cluster"
mkdir -p "$test_tmp/bin"
cat >"$test_tmp/bin/sacct" <<EOF
#!/usr/bin/env bash
echo "sacct \$*" >>"$test_tmp/sacct.log"
exec "$real_sacct" "\$@"
EOF
chmod +x "$test_tmp/bin/sacct"
export PATH=$test_tmp/bin:$PATH

id=$(submit "$test_tmp/one" --nodes 1 --launcher srun -- bash -c 'sleep 2; echo done')
[[ $id =~ ^[0-9]+$ ]] || fail "submit printed '$id', not a job id"
assert_eq COMPLETED "$(wait_job "$id")" "job state"

# What sacct says of it, asked as the report asks.
if said=$("$real_sacct" -n -P -j "$id" -o JobID,Elapsed,MaxRSS,ConsumedEnergyRaw,State 2>&1); then
  elapsed=$(awk -F'|' -v id="$id" '$1 == id { print $2 }' <<<"$said")
  [ -n "$elapsed" ] || fail "sacct answered without the job's allocation line: $said"
  want_page="<tr><th>elapsed</th><td>$elapsed</td></tr>"
  want_json=$elapsed
  note "sacct records job $id: elapsed $elapsed"
else
  first=$(head -1 <<<"$said")
  want_page="not recorded (sacct: $first)"
  want_json=""
  note "sacct answers '$first': the page says so"
fi

: >"$test_tmp/sacct.log"
out=$("$HPCLAUNCH" report "$test_tmp/one") || fail "report failed: $out"
page=$(cat "$test_tmp/one/report.html")
assert_contains "$page" "<section id=\"usage\">"
assert_contains "$page" "<tr><th>state</th><td>COMPLETED</td></tr>" "the state, from the scheduler"
assert_contains "$page" "$want_page" "what sacct says, on the page"
assert_eq 1 "$(grep -c "^sacct -n -P -j $id -o JobID,Elapsed,MaxRSS,ConsumedEnergyRaw,State$" "$test_tmp/sacct.log")" \
  "one sacct for the job's usage ($(cat "$test_tmp/sacct.log"))"

json=$("$HPCLAUNCH" report "$test_tmp/one" --json) || fail "report --json failed"
usage=$(python3 -c 'import json, sys; j = json.load(sys.stdin); print(j["usage"].get("elapsed", "")); print(j["usage_note"])' <<<"$json")
assert_eq "$want_json" "$(sed -n 1p <<<"$usage")" "--json's usage.elapsed"
if [ -z "$want_json" ]; then
  assert_eq "$want_page" "$(sed -n 2p <<<"$usage")" "--json's usage_note: sacct's words, one line"
fi

# An array of 2: one sacct for both tasks; each task's page says what sacct answered for it.
aid=$(submit "$test_tmp/arr" --nodes 1 --launcher srun --array 2 -- bash -c 'echo task $HPCLAUNCH_ARRAY_TASK_ID')
[[ $aid =~ ^[0-9]+$ ]] || fail "submit --array printed '$aid', not a job id"
for t in 0 1; do wait_job "${aid}_$t" >/dev/null; done
: >"$test_tmp/sacct.log"
"$HPCLAUNCH" report "$test_tmp/arr" >/dev/null || fail "report of the array failed"
assert_eq 1 "$(grep -c "^sacct -n -P -j ${aid}_0,${aid}_1 -o JobID,Elapsed" "$test_tmp/sacct.log")" \
  "one sacct for the array's tasks ($(cat "$test_tmp/sacct.log"))"
assert_contains "$(cat "$test_tmp/arr/report.html")" "each task&#39;s page says what the scheduler records of it"
for t in 0 1; do
  task_page=$(cat "$test_tmp/arr/tasks/$t/report.html")
  if [ -n "$want_json" ]; then
    assert_contains "$task_page" "<tr><th>elapsed</th>" "task $t's elapsed time"
  else
    assert_contains "$task_page" "$want_page" "task $t's page: what sacct says"
  fi
done
echo "PASS $test_name"
