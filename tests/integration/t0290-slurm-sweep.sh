#!/usr/bin/env bash
# Sweeps on the real test cluster: a 2 x 2 sweep of hpclaunch-train is one Slurm array job of 4 tasks, at most 2 at
# once; every task trains with its own values (its lr in every step record, its batch size in its step count), under
# 2 agents' workers on a node it may share with another task (their rendezvous ports differ), into its own directory
# (metrics, output). `jobs` shows the array as one line of counts; `status`, `logs --task` and JOB_I name one task;
# `plot` overlays the 4 runs and tables their best validation loss. A second array: cancelling a waiting task keeps
# it from starting, cancelling a running one leaves the others running; cancelling the array ends them all.
source "$(dirname "$0")/lib.sh"
[ -x "${HPCLAUNCH_TRAIN:-}" ] || skip "hpclaunch-train was not built (no LibTorch)"
need_hpclaunch
need_cluster
export XDG_STATE_HOME=$test_tmp/state  # this test's own job index
export PATH=$(dirname "$HPCLAUNCH_TRAIN"):$(dirname "$HPCLAUNCH"):$PATH
sites=$HPCLAUNCH_SOURCE_DIR/tests/integration/sites
cd "$test_tmp"
hl() { "$HPCLAUNCH" "$@"; }
submit() {  # JOBDIR ARG...: prints the job id
  local dir=$1
  shift
  hl submit --site test-shaped --site-file "$sites/test-shaped.yaml" --nodes 1 --time 10 --job-dir "$dir" "$@" \
    2>>"$test_tmp/submit.err"
}

# 1. The sweep: lr x global batch size, the lr constant through the run so that every step record shows it.
d=$test_tmp/sweep
id=$(submit "$d" --launcher agent --gpus-per-node 2 --sweep lr=0.001,0.003 --sweep global-batch-size=64,128 \
  --max-concurrent 2 --env HPCLAUNCH_AGENT_VERBOSE=1 -- hpclaunch-train --model autoencoder --synthetic --synthetic-samples 512 --epochs 2 \
  --lr-decay constant --lr-scaling none --warmup-steps 0 --threads 1 --val-batches 1 --log-every 100 \
  --metrics '{task_dir}/metrics.jsonl') || fail "submit: $(cat submit.err)"
[[ $id =~ ^[0-9]+$ ]] || fail "submit printed '$id', not a job id"
assert_contains "$(cat submit.err)" "submitted array job $id (4 tasks, at most 2 at once)"
assert_contains "$(scontrol show job "$id")" "ArrayTaskThrottle=2"
out=$(timeout 300 "$HPCLAUNCH" wait --interval 0.5 "$id") || fail "wait exited $? for the sweep: $out; $(hl status "$id")"
assert_eq "$id 4 tasks: 4 completed" "$(echo "$out" | tail -n 1)" "wait's last line"
status=$(hl status "$id")
assert_eq "$id 4 tasks: 4 completed" "$(echo "$status" | head -n 1)" "status of the array"
i=0
for lr in 0.001 0.003; do
  for bs in 64 128; do
    t=$d/tasks/$i
    assert_contains "$(echo "$status" | grep "^  ${id}_$i ")" "COMPLETED" "status line of task $i"
    assert_contains "$(echo "$status" | grep "^  ${id}_$i ")" "lr=$lr global-batch-size=$bs" "status line of task $i"
    assert_file "$t/slurm-${id}_$i.out"
    assert_file "$t/task.json"
    lrs=$(grep '"type":"step"' "$t/metrics.jsonl" | sed 's/.*"lr":\([0-9.e-]*\).*/\1/' | sort -u | xargs)
    assert_eq "$lr" "$lrs" "learning rates in task $i's step records"
    steps=$(grep -c '"type":"step"' "$t/metrics.jsonl")
    assert_eq $((2 * 512 / bs)) "$steps" "steps of task $i (512 samples, 2 epochs, batch $bs)"
    log=$(hl logs "${id}_$i")
    assert_eq "$log" "$(hl logs "$id" --task $i)" "logs JOB_I and logs --task I"
    assert_contains "$log" "lr $lr -> peak $lr"
    assert_contains "$log" "done: $steps steps"
    i=$((i + 1))
  done
done
# Tasks shared the two nodes (4 tasks of 1 node, 2 at once): each agent's store got its own port, array's + index.
ports=$(for i in 0 1 2 3; do sed -n 's/.*rendezvous store on [^ ]*:\([0-9]*\).*/\1/p' "$d/tasks/$i/slurm-${id}_$i.out" | head -n 1; done | xargs)
base=$((20000 + id % 10000))
assert_eq "$base $((base + 1)) $((base + 2)) $((base + 3))" "$ports" "the tasks' rendezvous ports"
jobs_line=$(hl jobs | grep "^$id ")
assert_contains "$jobs_line" "4 tasks: 4 completed" "jobs' one line for the array"
assert_eq 1 "$(hl jobs | grep -c "$d")" "lines of jobs naming the array's directory"

# plot: the four runs overlaid (their four colours), and each task's best validation loss.
out=$(hl plot "$id" -o "$test_tmp/sweep.svg") || fail "plot of the array failed: $out"
assert_contains "$out" "$id: best validation loss of each task"
assert_eq 4 "$(echo "$out" | grep -cE '^[0-3] +0\.00[13] +(64|128) +0\.[0-9]+ +[0-9]+ ')" "table rows (out: $out)"
assert_eq 1 "$(echo "$out" | grep -c '<- best$')" "the best task marked once"
assert_eq "$test_tmp/sweep.svg" "$(echo "$out" | tail -n 1)"
/usr/bin/python3 - "$test_tmp/sweep.svg" <<'PY' || fail "the plot does not hold four runs' colours"
import sys
svg = open(sys.argv[1]).read()
def css(r, g, b): return "stroke:rgb(" + ",".join(("%f" % (v * 100 / 255)).rstrip("0").rstrip(".") + "%" for v in (r, g, b)) + ")"
for rgb in [(31, 119, 180), (255, 127, 14), (44, 160, 44), (214, 39, 40)]:
    assert css(*rgb) in svg, css(*rgb)
PY

# 2. Cancel one waiting task and one running task: the others keep running; then the whole array.
d2=$test_tmp/sleepers
id2=$(submit "$d2" --launcher srun --gpus-per-node 1 --array 3 --max-concurrent 2 \
  -- bash -c 'echo "task $HPCLAUNCH_ARRAY_TASK up"; sleep 120') || fail "submit sleepers: $(cat submit.err)"
wait_until --every 0.5 60 "two of the sleepers to run" \
  'hl status "$id2" | head -n 1 | grep -x "$id2 3 tasks: 2 running, 1 pending"'
hl cancel "${id2}_2" 2>/dev/null || fail "cancel of the waiting task ${id2}_2 failed"
# Slurm may keep the cancelled task's record (CANCELLED) or drop it unstarted (CANCELLED (before it started)).
assert_contains "$(hl status "${id2}_2")" "${id2}_2 CANCELLED" "the task cancelled while waiting"
hl cancel "${id2}_1" 2>"$test_tmp/cancel.err" || fail "cancel ${id2}_1: $(cat cancel.err)"
assert_contains "$(cat cancel.err)" "asked slurm to cancel array task ${id2}_1"
wait_until --every 0.5 30 "task 1 to be cancelled" 'hl status "${id2}[1]" | grep CANCELLED'
# Its exit code (143: scancel's SIGTERM) shows once the batch step has reported it, which may be before or after
# squeue first says CANCELLED: the runs before 2026-11-28's cold run 12 saw CANCELLED alone, that one the exit too.
got=$(hl status "${id2}[1]")
case $got in
  "${id2}_1 CANCELLED" | "${id2}_1 CANCELLED (exit 143)") ;;
  *) fail "the cancelled running task (named JOB[I]): expected '${id2}_1 CANCELLED', with or without ' (exit 143)'; got '$got'" ;;
esac
assert_eq "$id2 3 tasks: 1 running, 2 cancelled" "$(hl status "$id2" | head -n 1)" "the others after two were cancelled"
sleep 2  # task 2 is not started in task 1's place, task 0 keeps running
assert_eq "$id2 3 tasks: 1 running, 2 cancelled" "$(hl status "$id2" | head -n 1)" "the others, a moment later"
assert_contains "$(cat "$d2/tasks/0/slurm-${id2}_0.out")" "task 0 up"
[ ! -e "$d2/tasks/2/slurm-${id2}_2.out" ] || fail "the task cancelled while waiting ran"
hl cancel "$d2" 2>/dev/null || fail "cancel of the array failed"
rc=0
timeout 120 "$HPCLAUNCH" wait --interval 0.5 "$id2" >/dev/null 2>"$test_tmp/wait.err" || rc=$?
assert_eq 1 "$rc" "wait's exit code for a cancelled array"
assert_contains "$(cat "$test_tmp/wait.err")" "$id2 3 tasks: 3 cancelled"
assert_eq "" "$(squeue -h -j "$id2" -o %T)" "squeue still lists tasks of the cancelled array"
echo ok
