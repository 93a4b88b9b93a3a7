#!/usr/bin/env bash
# Following local-site jobs: `jobs` lists them (a removed directory as such), `status` reads the local runner's
# state.json, `logs` prints output.log (--rank keeps one rank's [host:rank] lines; --follow ends with the job),
# `wait` prints plain progress lines with the metrics' step and loss when not on a terminal and exits 0 only for
# a completed job; `cancel` stops a running job's process group.
source "$(dirname "$0")/lib.sh"
need_hpclaunch
for v in $(env | grep -oE '^(SLURM|PBS|PMI|OMPI_COMM|HPCLAUNCH_)[A-Z_]*' || true); do unset "$v"; done
unset MASTER_ADDR MASTER_PORT
export XDG_STATE_HOME=$test_tmp/state   # this test's own job index
cd "$test_tmp"
hl() { "$HPCLAUNCH" "$@"; }

# No jobs yet: a message, not an error.
out=$(hl jobs 2>&1) || fail "jobs with no index failed: $out"
assert_contains "$out" "no jobs submitted from this machine yet"

# A job of 2 emulated nodes x 2 workers under the agent: each rank says who it is.
hl submit --site local --nodes 2 --gpus-per-node 2 --job-dir "$test_tmp/ok" \
  -- bash -c 'echo "hello from rank $RANK"' >/dev/null 2>"$test_tmp/err" || fail "local job failed: $(cat "$test_tmp/err")"
state=$(python3 -c 'import json, sys; d = json.load(open(sys.argv[1])); print(d["state"], d["exit_code"], d["pid"] > 0)' \
  "$test_tmp/ok/state.json") || fail "state.json is not JSON: $(cat "$test_tmp/ok/state.json")"
assert_eq "exited 0 True" "$state" "state.json written by the local runner"
id=$(sed -n 's/.*"job_id": "\(local-[0-9-]*\)".*/\1/p' "$test_tmp/ok/job.json")
[ -n "$id" ] || fail "no job id in job.json"
assert_eq "$id COMPLETED" "$(hl status "$id")" "status by job id"
assert_eq "$id COMPLETED" "$(hl status "$test_tmp/ok")" "status by job directory"
all=$(hl logs "$id")
for r in 0 1 2 3; do assert_contains "$all" "hello from rank $r" "logs"; done
only=$(hl logs "$id" --rank 2)
assert_contains "$only" "hello from rank 2" "logs --rank 2"
assert_eq 1 "$(echo "$only" | wc -l)" "lines of logs --rank 2 (got: $only)"
assert_contains "$only" ":2] hello from rank 2" "the agent's [host:rank] prefix"
out=$(hl wait "$id") || fail "wait on a completed job exited $?: $out"
assert_eq "$id COMPLETED" "$out" "wait's last line"

# A failing job: status says so, wait exits non-zero.
hl submit --site local --nodes 1 --launcher srun --job-dir "$test_tmp/bad" -- bash -c 'exit 3' >/dev/null 2>&1 || true
assert_contains "$(hl status "$test_tmp/bad")" "FAILED (exit 3)"
rc=0; hl wait "$test_tmp/bad" >/dev/null 2>"$test_tmp/err" || rc=$?
assert_eq 1 "$rc" "wait's exit code for a failed job"
assert_contains "$(cat "$test_tmp/err")" "FAILED (exit 3)"

# A running job writing metrics lines (trainer/trainer.cc's format): wait shows its step and loss as plain lines.
step='for i in $(seq 1 6); do echo "{\"type\":\"step\",\"epoch\":1,\"step\":$i,\"loss\":0.$((9 - i)),\"lr\":0.001,\"samples_per_s\":100,\"step_time_s\":0.5}" >>"$HPCLAUNCH_JOB_DIR/metrics.jsonl"; echo "line $i"; sleep 0.5; done'
hl submit --site local --nodes 1 --launcher srun --job-dir "$test_tmp/run" -- bash -c "$step" >/dev/null 2>&1 &
submit_pid=$!
wait_until 30 "the job in run to start" '[ -f "$test_tmp/run/state.json" ]'
assert_contains "$(hl status "$test_tmp/run")" "RUNNING" "status of a running local job"
follow=$(timeout 60 "$HPCLAUNCH" logs --follow --interval 0.2 "$test_tmp/run" 2>"$test_tmp/follow.err") || fail "logs --follow exited $?"
assert_contains "$follow" "line 6" "logs --follow printed until the end"
assert_contains "$(cat "$test_tmp/follow.err")" "COMPLETED" "logs --follow names the end state"
wait "$submit_pid" || fail "the metrics job failed"
out=$(hl wait "$test_tmp/run") || fail "wait exited $? for a completed job"
assert_contains "$out" "step 6 loss 0.3 lr 1.00e-03 100 samples/s" "wait's progress from the metrics file"

hl submit --site local --nodes 1 --launcher srun --job-dir "$test_tmp/run2" -- bash -c "$step" >/dev/null 2>&1 &
submit_pid=$!
wait_until 30 "the job in run2 to start" '[ -f "$test_tmp/run2/state.json" ]'
out=$(timeout 60 "$HPCLAUNCH" wait --interval 0.3 "$test_tmp/run2") || fail "wait on a running job exited $?: $out"
[ "$(echo "$out" | grep -c ' RUNNING step ')" -ge 2 ] || fail "wait printed fewer than two progress lines while running: $out"
[ "$(echo "$out" | sort | uniq -d)" = "" ] || fail "wait repeated an unchanged line: $out"
wait "$submit_pid" || true

# Cancel a running job; wait and status say it was cancelled; cancelling again is an error.
hl submit --site local --nodes 2 --launcher srun --job-dir "$test_tmp/long" -- sleep 300 >/dev/null 2>&1 &
submit_pid=$!
wait_until 30 "the job in long to start" '[ -f "$test_tmp/long/state.json" ]'
hl cancel "$test_tmp/long" 2>/dev/null || fail "cancel of a running local job failed"
rc=0; timeout 30 "$HPCLAUNCH" wait --interval 0.2 "$test_tmp/long" >/dev/null 2>"$test_tmp/err" || rc=$?
assert_eq 1 "$rc" "wait's exit code for a cancelled job"
rc=0; wait "$submit_pid" || rc=$?
[ "$rc" -ne 0 ] || fail "the cancelled job's submit exited 0"
assert_contains "$(hl status "$test_tmp/long")" "CANCELLED (exit 143)"
pgid=$(sed -n 's/.*"pid": *\([0-9]*\).*/\1/p' "$test_tmp/long/state.json")
alive_in_group() { ps -e -o pgid=,stat=,pid=,args= | awk -v g="$1" '$1 == g && $2 !~ /^Z/'; }  # zombies are gone already
wait_until 10 "the cancelled job's processes (group $pgid) to end" 'alive_in_group "$pgid"; [ -z "$(alive_in_group "$pgid")" ]'
assert_fails "is not running on this machine" hl cancel "$test_tmp/long"

# wait --timeout on a job still running gives up with 124.
hl submit --site local --nodes 1 --launcher srun --job-dir "$test_tmp/slow" -- sleep 30 >/dev/null 2>&1 &
submit_pid=$!
wait_until 30 "the job in slow to start" '[ -f "$test_tmp/slow/state.json" ]'
rc=0; "$HPCLAUNCH" wait --timeout 1 --interval 0.2 "$test_tmp/slow" >/dev/null 2>"$test_tmp/err" || rc=$?
assert_eq 124 "$rc" "wait --timeout exit code"
assert_contains "$(cat "$test_tmp/err")" "still RUNNING after --timeout 1 s"
hl cancel "$test_tmp/slow" 2>/dev/null
wait "$submit_pid" || true

# jobs: every job with its site and nodes; a removed job directory is shown as gone, not an error.
rm -rf "$test_tmp/bad"
out=$(hl jobs) || fail "jobs failed: $out"
assert_contains "$out" "$id"
assert_eq 6 "$(echo "$out" | tail -n +2 | wc -l)" "rows of jobs"
assert_contains "$(echo "$out" | grep "$test_tmp/ok\$")" "local" "site column"
assert_contains "$(echo "$out" | grep "$test_tmp/bad\$")" "(job directory gone)"
assert_contains "$(echo "$out" | grep "$test_tmp/long\$")" "CANCELLED (exit 143)"

# Unknown jobs: one line naming the argument.
assert_fails "nosuchjob: is neither a job directory nor a job id listed by \`hpclaunch jobs\`" hl status nosuchjob
assert_fails "no output yet" bash -c "mkdir -p '$test_tmp/empty' && cp '$test_tmp/ok/job.json' '$test_tmp/ok/plan.json' '$test_tmp/empty/' && rm -f '$test_tmp/empty/state.json' && '$HPCLAUNCH' logs '$test_tmp/empty'"

# On a terminal (a pty from script(1)), wait redraws one line in place with \r and ends it with a newline.
hl submit --site local --nodes 1 --launcher srun --job-dir "$test_tmp/tty" -- bash -c "$step" >/dev/null 2>&1 &
submit_pid=$!
wait_until 30 "the job in tty to start" '[ -f "$test_tmp/tty/state.json" ]'
COLUMNS=200 timeout 60 script -qec "'$HPCLAUNCH' wait --interval 0.3 '$test_tmp/tty'" /dev/null >"$test_tmp/tty.out" 2>&1 \
  || fail "wait on a terminal exited $?: $(cat -A "$test_tmp/tty.out")"
wait "$submit_pid" || true
redraws=$(tr -cd '\r' <"$test_tmp/tty.out" | wc -c)
newlines=$(tr -cd '\n' <"$test_tmp/tty.out" | wc -c)
[ "$redraws" -ge 3 ] || fail "wait on a terminal redrew $redraws times: $(cat -A "$test_tmp/tty.out")"
# The pty turns the one final \n into \r\n: one line, redrawn, then ended.
assert_eq 1 "$newlines" "lines ended by wait on a terminal ($(cat -A "$test_tmp/tty.out"))"
assert_contains "$(tr '\r' '\n' <"$test_tmp/tty.out")" "COMPLETED" "wait's final state on a terminal"
assert_contains "$(tr '\r' '\n' <"$test_tmp/tty.out")" "step 6 loss 0.3" "wait's progress on a terminal"
