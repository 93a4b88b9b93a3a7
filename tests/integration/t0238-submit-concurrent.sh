#!/usr/bin/env bash
# Many `hpclaunch submit`s at once from the same directory (local site, same job name, same second): each gets its
# own job directory and one whole index entry, none lost. The job index survives kill -9: of a writer mid-line
# (what it leaves: a tail without newline) and of `jobs --prune` at random moments while submits go on. `jobs
# --prune` drops exactly the rows whose directory is gone. The counts are printed (docs/reliability.md).
source "$(dirname "$0")/lib.sh"
need_hpclaunch
for v in $(env | grep -oE '^(SLURM|PBS|PMI|OMPI_COMM|HPCLAUNCH_)[A-Z_]*' || true); do unset "$v"; done
unset MASTER_ADDR MASTER_PORT
index=$XDG_STATE_HOME/hpclaunch/jobs
mkdir -p "$test_tmp/work"
cd "$test_tmp/work"

# burst N: N submits at once of the same job; every one must succeed.
burst() {
  local n=$1 i pids=() failed=0
  for i in $(seq 1 "$n"); do
    "$HPCLAUNCH" submit --site local --nodes 1 --launcher srun --name same -- true >"$test_tmp/s$i.out" 2>&1 &
    pids+=($!)
  done
  for i in "${!pids[@]}"; do wait "${pids[$i]}" || { failed=$((failed + 1)); cat "$test_tmp/s$((i + 1)).out" >&2; }; done
  [ "$failed" = 0 ] || fail "$failed of $n simultaneous submits failed"
}
# check_all N: N job directories, each with job.json, N index lines, all distinct, whole and naming those directories.
check_all() {
  local n=$1 dirs
  dirs=$(find "$test_tmp/work/hpclaunch-jobs" -mindepth 1 -maxdepth 1 -type d -name 'same-*' | sort)
  assert_eq "$n" "$(echo "$dirs" | grep -c .)" "job directories after $n submits"
  for d in $dirs; do assert_file "$d/job.json"; done
  assert_eq "$n" "$(grep -c . "$index")" "index lines after $n submits"
  assert_eq "$dirs" "$(index_dirs "$index" | sort)" "index entries (whole, one per directory)"
  assert_eq "$n" "$(for d in $dirs; do sed -n 's/.*"job_id": "\(.*\)".*/\1/p' "$d/job.json"; done | sort -u | wc -l)" \
    "distinct job ids"
}

burst 2
check_all 2
burst 22
check_all 24
note "concurrent submits: 2 then 22 at once, 24 directories and 24 index entries, lost: 0"

# A writer killed mid-line leaves a tail without newline: readers skip it, the next submit cuts it off.
printf '%s' "$test_tmp/work/hpclaunch-jobs/half-writ" >>"$index"
out=$("$HPCLAUNCH" jobs --no-state) || fail "jobs with a torn tail failed: $out"
assert_not_contains "$out" "half-writ" "jobs with a torn tail"
burst 1
check_all 25

# jobs --prune at random moments killed -9 while submits go on: the index is always whole (the old rows or the
# pruned ones, never a mix or half a line), and no submitted job's row is lost.
for i in $(seq 1 20000); do echo "$test_tmp/gone/job-$i"; done >"$test_tmp/gone.list"
kills=0
for round in $(seq 1 8); do
  cat "$test_tmp/gone.list" >>"$index"
  "$HPCLAUNCH" jobs --prune >/dev/null 2>&1 &
  prune=$!
  "$HPCLAUNCH" submit --site local --nodes 1 --launcher srun --name same -- true >/dev/null 2>&1 &
  sub=$!
  sleep "0.0$((RANDOM % 10))$((RANDOM % 10))"
  kill -9 "$prune" 2>/dev/null && kills=$((kills + 1))
  wait "$prune" 2>/dev/null || true
  wait "$sub" || fail "a submit beside a killed prune failed"
  [ -z "$(tail -c1 "$index")" ] || fail "round $round: the index ends in half a line after kill -9 of prune"
  lines=$(grep -c . "$index")
  kept=$(index_dirs "$index" | grep -vc "^$test_tmp/gone/" || true)
  assert_eq $((25 + round)) "$kept" "round $round: rows of submitted jobs"
  [ $((lines - kept)) -eq 0 ] || [ $(((lines - kept) % 20000)) -eq 0 ] \
    || fail "round $round: $((lines - kept)) gone rows: a prune was half-applied"
  "$HPCLAUNCH" jobs --prune >"$test_tmp/pruned" 2>&1 || fail "jobs --prune failed: $(cat "$test_tmp/pruned")"
done
check_all 33
note "jobs --prune killed -9 $kills times of 8 while submits ran: index whole, 33 of 33 rows kept, lost: 0"

# --prune drops exactly the rows whose directory is gone, and says which.
victim=$(index_dirs "$index" | head -1)
rm -rf "$victim"
out=$("$HPCLAUNCH" jobs --prune 2>"$test_tmp/err") || fail "jobs --prune failed: $(cat "$test_tmp/err")"
assert_eq "$victim" "$out" "rows dropped by --prune"
assert_contains "$(cat "$test_tmp/err")" "dropped 1 job(s) whose directory is gone"
assert_eq 32 "$(grep -c . "$index")" "index lines after --prune"
assert_not_contains "$("$HPCLAUNCH" jobs --no-state)" "(job directory gone)" "jobs after --prune"
