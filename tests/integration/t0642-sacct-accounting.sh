#!/usr/bin/env bash
# What the scheduler says a job used, from real Slurm accounting: a cluster of its own with a MariaDB server and a
# slurmdbd (TEST_CLUSTER_ACCOUNTING=1 scripts/test-cluster.sh: the shared test clusters have no accounting, so on
# them `report` only quotes sacct's refusal, t0641), jobacct_gather/linux and sacctmgr's cluster, account and user.
# 1. A job whose srun step holds 100 MiB for two seconds: `report --json` and the page show the elapsed time and the
#    largest MaxRSS with its step (0) exactly as this cluster's own sacct prints them for the job.
# 2. A running job (its steps have no MaxRSS until they end), one pending after it and then cancelled before it
#    started: each one's note says so, not "no memory use".
# Everything (slurmctld, slurmd, slurmdbd, mariadbd, the database) is stopped and removed at the end, on failure too.
# A plain integration test, not a *-slurm-* one: it brings its own cluster, and needs root as they do.
source "$(dirname "$0")/lib.sh"
need_hpclaunch
need_cmd mariadbd mariadb-install-db slurmdbd sacctmgr
tc=$HPCLAUNCH_SOURCE_DIR/scripts/test-cluster.sh
dir=$test_tmp/cluster
trap 'rc=$?; "$tc" stop "$dir" >/dev/null 2>&1 || true; _lib_cleanup $rc' EXIT
t0=$SECONDS
TEST_CLUSTER_ACCOUNTING=1 "$tc" start "$dir" 2>"$test_tmp/start.err" ||
  fail "the accounting cluster did not start: $(cat "$test_tmp/start.err")"
note "cluster with slurmdbd and MariaDB up in $((SECONDS - t0)) s"
export HPCLAUNCH_CLUSTER_DIR=$dir
# shellcheck disable=SC1091
source "$dir/env.sh"
assert_contains "$(sacctmgr -n -P show assoc user=root format=Cluster,Account,User)" "test|hpclaunch|root" \
  "sacctmgr's associations"
submit() { submit_test_site test-perlmutter "$1" --account m1234_g --nodes 1 --launcher srun "${@:2}"; }
usage_of() {  # JOBDIR: --json's usage as KEY=VALUE lines, then note=NOTE
  "$HPCLAUNCH" report "$1" --json | /usr/bin/python3 -c 'import json, sys
j = json.load(sys.stdin)
for k, v in j["usage"].items(): print(f"{k}={v}")
print("note=" + j["usage_note"])'
}

# 1. Memory and time, then what sacct prints of them.
id=$(submit "$test_tmp/mem" -- /usr/bin/python3 -c 'import time; b = b"x" * (100 << 20); time.sleep(2)') ||
  fail "submit failed"
[[ $id =~ ^[0-9]+$ ]] || fail "submit printed '$id', not a job id"
# 2. Started now, to be asked while they run and wait.
run_id=$(submit "$test_tmp/run" -- sleep 60) || fail "submit of the running job failed"
pend_id=$(submit "$test_tmp/pend" --after "$run_id" -- true) || fail "submit of the pending job failed"

assert_eq COMPLETED "$(wait_job "$id" 120)" "the job's state (output: $(cat "$test_tmp/mem"/slurm-*.out 2>/dev/null))"
sacct_of() { sacct -n -P -j "$1" -o JobID,Elapsed,MaxRSS,ConsumedEnergyRaw,State; }
# slurmctld tells slurmdbd of the job's end on its own time: until then the allocation line says RUNNING.
wait_until 30 "sacct to record job $id as COMPLETED with step 0's MaxRSS" \
  'said=$(sacct_of "$id"); echo "$said"; grep -q "^$id|.*|COMPLETED$" <<<"$said" && grep -Eq "^$id\.0\|[^|]*\|[0-9.]+[KMGTP]?\|" <<<"$said"'
note "sacct: $(tr '\n' ' ' <<<"$said")"
# What the page must show, from sacct's own lines: the allocation's Elapsed; the largest step MaxRSS in KiB, MiB...
# to one decimal, as sacct's units (K = 1024 bytes) say; the number of steps.
want=$(/usr/bin/python3 -c 'import sys
lines = [l.split("|") for l in sys.stdin.read().split("\n") if l]
alloc = [l for l in lines if "." not in l[0]][0]
steps = [l for l in lines if "." in l[0]]
def size(t):
    if not t: return None
    scale = 1024 ** ("KMGTP".index(t[-1]) + 1) if t[-1] in "KMGTP" else 1
    return float(t.rstrip("KMGTP")) * scale
rss, step = max((size(l[2]), l[0].split(".")[1]) for l in steps if size(l[2]) is not None)
units = ["B", "KiB", "MiB", "GiB", "TiB"]
u = 0
while rss >= 1024 and u + 1 < len(units): rss /= 1024; u += 1
print(f"elapsed={alloc[1]}"); print(f"max RSS={rss:.1f} {units[u]} (step {step})"); print(f"steps={len(steps)}")' <<<"$said")
want_elapsed=$(sed -n 's/^elapsed=//p' <<<"$want")
want_rss=$(sed -n 's/^max RSS=//p' <<<"$want")
case $want_rss in
  *"(step 0)") ;;
  *) fail "sacct's largest MaxRSS is not step 0's (the srun step that held 100 MiB): $want_rss; sacct: $said" ;;
esac
[[ $want_elapsed =~ ^00:00:0[2-9]$|^00:00:[1-9][0-9]$ ]] || fail "sacct's Elapsed '$want_elapsed' is not the job's 2 s or more"
got=$(usage_of "$test_tmp/mem") || fail "report --json failed"
for line in "elapsed=$want_elapsed" "max RSS=$want_rss" "$(grep '^steps=' <<<"$want")" "state=COMPLETED" "note="; do
  grep -qxF "$line" <<<"$got" || fail "report --json's usage has no '$line'; it has: $(tr '\n' ';' <<<"$got")"
done
"$HPCLAUNCH" report "$test_tmp/mem" >/dev/null || fail "report failed"
page=$(sed -n '/<section id="usage">/,/<\/section>/p' "$test_tmp/mem/report.html")
assert_contains "$page" "<tr><th>elapsed</th><td>$want_elapsed</td></tr>" "the page's usage section"
assert_contains "$page" "<tr><th>max RSS</th><td>$want_rss</td></tr>" "the page's usage section"
assert_not_contains "$page" 'class="note"' "the page's usage section of a job that sacct recorded whole"
note "job $id: elapsed $want_elapsed, max RSS $want_rss, as sacct prints them"

# 2. Running, pending, cancelled before it started.
wait_until 30 "sacct to list job $run_id's batch step as RUNNING" \
  'said=$(sacct_of "$run_id"); echo "$said"; grep -q "^$run_id\.batch|.*|RUNNING$" <<<"$said"'
got=$(usage_of "$test_tmp/run") || fail "report --json of the running job failed"
assert_contains "$got" "note=step(s) still running: sacct records a step's MaxRSS when it ends" "the running job's usage"
grep -q '^elapsed=' <<<"$got" || fail "the running job's usage has no elapsed time: $got"
assert_eq "not started yet (sacct: PENDING)" "$(sed -n 's/^note=//p' <<<"$(usage_of "$test_tmp/pend")")" \
  "the pending job's usage note"
"$HPCLAUNCH" cancel "$test_tmp/pend" >/dev/null || fail "cancel of the pending job failed"
"$HPCLAUNCH" cancel "$test_tmp/run" >/dev/null || fail "cancel of the running job failed"
wait_until 30 "sacct to record job $pend_id as cancelled" 'sacct_of "$pend_id" | grep -q "|CANCELLED"'
assert_eq "never started (sacct: CANCELLED by 0, no steps)" "$(sed -n 's/^note=//p' <<<"$(usage_of "$test_tmp/pend")")" \
  "the usage note of the job cancelled while pending"
note "ok in $((SECONDS - t0)) s with the cluster's start"
echo "PASS $test_name"
