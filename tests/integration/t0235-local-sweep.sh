#!/usr/bin/env bash
# Arrays and sweeps on the local site: the tasks run one after another, or M at a time; each gets its values
# byte-exact in its argv and environment (a spec's list holds values with spaces, quotes, commas and $), its own
# directory and output; tasks running at once under their agents get their own rendezvous ports. `status`, `logs`,
# `wait` and `cancel` take the array or one task: cancelling a waiting task skips it, a running one ends only it,
# the array stops the rest. --dry-run prints the table of tasks and writes nothing. Bad sweeps are one line naming
# the flag, exit 2, with nothing written or listed.
source "$(dirname "$0")/lib.sh"
need_hpclaunch
export XDG_STATE_HOME=$test_tmp/state  # this test's own job index
cd "$test_tmp"
hl() { "$HPCLAUNCH" "$@"; }
index_lines() { cat "$XDG_STATE_HOME/hpclaunch/jobs" 2>/dev/null | wc -l; }
job_id() { sed -n 's/.*"job_id": "\([^"]*\)".*/\1/p' "$1/job.json"; }

# 1. A spec's sweep, one task after another: values reach argv ({msg}) and the environment unchanged; keys without
#    a placeholder are appended as --key VALUE.
cat >"$test_tmp/spec.yaml" <<'EOF'
site: local
nodes: 1
launcher: srun
sweep:
  msg: ["a b", "it's \"q\"", "x,y $HOME"]
  n: [1]
command: [bash, -c, 'printf "<%s>" "$@"; echo; echo "env=<$HPCLAUNCH_SWEEP_MSG> task=$HPCLAUNCH_ARRAY_TASK dir=$HPCLAUNCH_JOB_DIR"', argv0, "{msg}"]
EOF
hl submit --spec spec.yaml --job-dir "$test_tmp/seq" >"$test_tmp/seq.out" 2>"$test_tmp/seq.err" || fail "the spec's sweep failed: $(cat seq.err)"
assert_contains "$(cat seq.err)" "(3 tasks, one after another; 1 emulated node(s) each)"
i=0
for msg in "a b" "it's \"q\"" 'x,y $HOME'; do
  assert_eq "<$msg><--n><1>
env=<$msg> task=$i dir=$test_tmp/seq/tasks/$i" "$(cat "$test_tmp/seq/tasks/$i/output.log")" "task $i's output"
  i=$((i + 1))
done
assert_contains "$(cat seq.out)" "<a b><--n><1>" "the output streamed to the terminal"
id=$(job_id "$test_tmp/seq")
assert_eq "$id 3 tasks: 3 completed" "$(hl status "$id" | head -n 1)"
assert_contains "$(hl status "$id" | sed -n 3p)" "${id}_1"
assert_contains "$(hl status "$id" | sed -n 3p)" "COMPLETED"
assert_contains "$(hl status "$id" | sed -n 3p)" "msg=it's \"q\" n=1"
assert_eq "${id}_2 COMPLETED" "$(hl status "${id}_2")"
assert_eq "$(cat "$test_tmp/seq/tasks/2/output.log")" "$(hl logs "$id" --task 2)" "logs --task 2"
assert_contains "$(hl logs "$id")" "==> ${id}_1 (msg=it's \"q\" n=1) <==" "logs of the whole array"
hl wait "$id" >/dev/null || fail "wait of a completed array exited $?"
assert_eq 1 "$(index_lines)" "index lines for one array"
assert_contains "$(hl jobs)" "3 tasks: 3 completed"

# 2. Two at a time under the agent, each task one emulated node with 2 workers: the agents of tasks running at
#    once serve their stores on the array's port plus the task's index.
hl submit --site local --nodes 1 --gpus-per-node 2 --launcher agent --array 3 --max-concurrent 2 \
  --env HPCLAUNCH_AGENT_VERBOSE=1 --job-dir "$test_tmp/par" -- bash -c 'echo "rank $RANK of task {task}"; sleep 2' \
  >/dev/null 2>"$test_tmp/par.err" || fail "the concurrent array failed: $(cat par.err) $(cat par/tasks/*/output.log)"
assert_contains "$(cat par.err)" "(3 tasks, 2 at a time;"
assert_contains "$(cat par.err)" "hpclaunch: task 2 (task 2) started"
ports=""
for i in 0 1 2; do
  assert_contains "$(cat "$test_tmp/par/tasks/$i/output.log")" "rank 1 of task $i"
  ports="$ports $(sed -n 's/.*rendezvous store on [^ ]*:\([0-9]*\).*/\1/p' "$test_tmp/par/tasks/$i/output.log")"
done
read -r p0 p1 p2 <<<"$ports"
assert_eq "$((p0 + 1)) $((p0 + 2))" "$p1 $p2" "the tasks' rendezvous ports (the first: $p0)"

# 3. Cancel: a task still waiting is skipped, a running one ends alone, the array stops the rest.
hl submit --site local --nodes 1 --launcher srun --array 4 --job-dir "$test_tmp/cancel" -- bash -c 'echo up; sleep 60' \
  >/dev/null 2>"$test_tmp/cancel.err" &
runner=$!
wait_until 30 "task 0 to start" '[ -f "$test_tmp/cancel/tasks/0/state.json" ]'
cid=$(job_id "$test_tmp/cancel")
assert_eq "$cid 4 tasks: 1 running, 3 pending" "$(hl status "$cid" | head -n 1)"
assert_eq "${cid}_1 PENDING (waiting for an earlier task)" "$(hl status "${cid}_1")"
hl cancel "${cid}_1" 2>/dev/null || fail "cancel of a waiting task failed"
hl cancel "${cid}[0]" 2>/dev/null || fail "cancel of the running task failed"
wait_until 30 "task 2 to start in task 0's place" '[ -f "$test_tmp/cancel/tasks/2/state.json" ]'
assert_eq "$cid 4 tasks: 1 running, 1 pending, 2 cancelled" "$(hl status "$cid" | head -n 1)" "after cancelling tasks 1 and 0"
hl cancel "$cid" 2>"$test_tmp/err" || fail "cancel of the array failed: $(cat err)"
assert_contains "$(cat err)" "asked local to cancel array job $cid"
rc=0
wait "$runner" || rc=$?
assert_eq 143 "$rc" "submit's exit status for a cancelled array"
assert_eq "$cid 4 tasks: 4 cancelled" "$(hl status "$cid" | head -n 1)"
assert_eq "${cid}_3 CANCELLED (never started: the array's runner ended first)" "$(hl status "${cid}_3")"
rc=0
hl wait "$cid" >/dev/null 2>&1 || rc=$?
assert_eq 1 "$rc" "wait's exit code for a cancelled array"

# 4. --dry-run: the script and the table of tasks; nothing written or listed.
lines=$(index_lines)
out=$(hl submit --site local --dry-run --job-dir "$test_tmp/dry" --sweep lr=0.1,0.2 -- train --lr '{lr}' 2>"$test_tmp/err")
assert_contains "$out" '  1) export HPCLAUNCH_SWEEP_LR=0.2; hpclaunch_command=(train --lr 0.2) ;;'
assert_contains "$(cat err)" "an array job of 2 tasks, one after another:"
assert_contains "$(cat err)" "1     0.2  train --lr 0.2"
[ ! -e "$test_tmp/dry" ] || fail "--dry-run wrote its job directory"
assert_eq "$lines" "$(index_lines)" "index lines after --dry-run"

# 5. Bad input: one line naming the flag (or the spec's position), exit 2, nothing written or listed.
bad() {  # EXPECTED ARG...
  local want=$1 rc=0
  shift
  hl submit --site local --job-dir "$test_tmp/bad" "$@" >"$test_tmp/out" 2>"$test_tmp/err" || rc=$?
  assert_eq 2 "$rc" "exit status for $*"
  assert_eq 1 "$(wc -l <"$test_tmp/err")" "error lines for $* ($(cat "$test_tmp/err"))"
  assert_contains "$(cat "$test_tmp/err")" "hpclaunch: error: $want"
  [ ! -e "$test_tmp/bad" ] || fail "a refused submission ($*) left its directory"
  assert_eq "$lines" "$(index_lines)" "index lines after $*"
}
bad "--sweep-zip: 'lr' has 2 value(s) but 'bs' has 3;" --sweep lr=1,2 --sweep bs=1,2,3 --sweep-zip -- true
bad "--sweep: 'lr' has no '='; write --sweep KEY=V1,V2" --sweep lr -- true
bad "--sweep: 'lr' has an empty value;" --sweep lr=1,,2 -- true
bad "--array: 0 is not in 1..10000;" --array 0 -- true
bad "--array: --array and --sweep both set the number of tasks;" --array 2 --sweep lr=1,2 -- true
bad "--max-concurrent: limits the tasks of an array, but there is none;" --max-concurrent 2 -- true
bad "--max-concurrent: 0 is below 1;" --array 2 --max-concurrent 0 -- true
bad "-- --lr={lrr}: '{lrr}' is not a swept key nor {task} or {task_dir} (did you mean 'lr'?)" --sweep lr=1,2 -- train '--lr={lrr}'
bad "-- ... --metrics: every task of the array would write 'm.jsonl'" --sweep lr=1,2 -- hpclaunch-train --metrics m.jsonl
bad "--sweep: the product of 100 x 101 value(s) is more than 10000 tasks;" --sweep "a=$(seq -s, 1 100)" --sweep "b=$(seq -s, 0 100)" -- true
printf 'site: local\nsweep:\n  lr: [1, 2]\n  bs: [1]\nsweep_zip: true\ncommand: [true]\n' >"$test_tmp/zip.yaml"
bad "$test_tmp/zip.yaml:5:12: 'lr' has 2 value(s) but 'bs' has 1;" --spec "$test_tmp/zip.yaml"
echo ok
