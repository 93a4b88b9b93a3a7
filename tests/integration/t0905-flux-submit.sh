#!/usr/bin/env bash
# Flux: `hpclaunch submit` on a Flux site (tests/integration/sites/test-flux.yaml) through Flux's backend, and the
# rendered batch script run end to end on two emulated nodes: a tiny hpclaunch-train run under `flux run` (the
# `flux` launcher) and under the agent, each rank's RANK/WORLD_SIZE/MASTER_ADDR, `status`, `wait`, `cancel` and
# `cancel --signal` through `flux jobs`, `flux cancel` and `flux job kill`, a failing rank that ends its step at
# once (-o exit-on-error) and fails the job with its exit code, a sweep as a job per task (Flux has no arrays), and
# MASTER_ADDR asked of `flux hostlist` where the profile's rule is first-node.
# `flux` here is a STAND-IN (tests/schedulers/flux/flux, its README.md says what it does and from which man page):
# flux-core cannot be installed on this machine (Debian has no package; PyPI's `flux-core` is an unrelated
# project), so no real Flux instance, broker or PMI runs here. The stand-in runs every task on this machine and
# gives it the variables flux-environment(7) lists.
source "$(dirname "$0")/lib.sh"
need_hpclaunch
need_cmd python3
[ -x "${HPCLAUNCH_TRAIN:-}" ] || skip "hpclaunch-train was not built (no LibTorch): set HPCLAUNCH_TRAIN"
for v in $(env | grep -oE '^(SLURM|PBS|PMI|OMPI_COMM|FLUX|HPCLAUNCH_)[A-Z_0-9]*' || true); do
  case $v in HPCLAUNCH_TRAIN | HPCLAUNCH_SOURCE_DIR | HPCLAUNCH_BUILD_DIR | HPCLAUNCH_KEEP_TMP) ;; *) unset "$v" ;; esac
done
unset MASTER_ADDR MASTER_PORT
standin=$HPCLAUNCH_SOURCE_DIR/tests/schedulers/flux
[ -x "$standin/flux" ] || fail "no stand-in flux at $standin/flux"
export PATH=$standin:$PATH FLUX_STANDIN_DIR=$test_tmp/flux FLUX_STANDIN_NODES='node[0-1]' FLUX_STANDIN_CORES=4 \
  FLUX_STANDIN_GPUS=0 LC_ALL=C.UTF-8
site_file=$HPCLAUNCH_SOURCE_DIR/tests/integration/sites/test-flux.yaml
cd "$test_tmp"
hl() { "$HPCLAUNCH" "$@"; }
submit() {  # JOBDIR ARG...: prints the job id
  local dir=$1
  shift
  hl submit --site test-flux --site-file "$site_file" --nodes 2 --job-dir "$test_tmp/$dir" "$@" >/dev/null \
    2>"$test_tmp/$dir.err" || fail "submit of $dir failed: $(cat "$test_tmp/$dir.err")"
  sed -n 's/.*"job_id": "\([^"]*\)".*/\1/p' "$test_tmp/$dir/job.json"
}
finished() {  # JOBDIR [SECONDS]: waits until the job has ended; prints its status line
  local dir=$1  # named first: wait_until's condition cannot read this function's $1
  wait_until "${2:-240}" "the Flux job in $dir to end" \
    'out=$(hl status "$test_tmp/$dir"); echo "$out"; [ -n "$out" ] && ! grep -qE " (RUN|SCHED|DEPEND|PRIORITY|CLEANUP)" <<<"$out"'
  hl status "$test_tmp/$dir"
}
report='echo "worker $RANK $WORLD_SIZE $MASTER_ADDR"'

# 1. The `flux` launcher: one flux run task per worker; each reads its rank from FLUX_TASK_RANK.
id=$(submit ranks --launcher flux -- sh -c "$report")
case $id in f[1-9A-HJ-NP-Za-km-z]*) ;; *) fail "job.json's id '$id' is no f58 id" ;; esac
script=$(cat "$test_tmp/ranks/job.sh")
assert_contains "$script" "# flux: -N 2"
assert_contains "$script" "# flux: --queue=debug"
assert_contains "$script" "flux run -N 2 -n 2 -c 4"
assert_eq "$id COMPLETED" "$(finished ranks)" "status of the ranks job"
assert_workers "$test_tmp/ranks/output.log" 2 127.0.0.1 "the flux launcher's workers: RANK WORLD_SIZE MASTER_ADDR"
grep -qE '^1: worker 1 2 ' "$test_tmp/ranks/output.log" || fail "flux run -l labels no line with the rank: $(cat "$test_tmp/ranks/output.log")"
assert_contains "$(hl logs "$id" --rank 1)" "worker 1 2 127.0.0.1" "logs --rank 1"

# 2. The agent: one agent per node under flux run, each starting the node's worker.
submit agent --launcher agent -- sh -c "$report" >/dev/null
assert_contains "$(finished agent)" "COMPLETED" "status of the agent job"
assert_workers "$test_tmp/agent/output.log" 2 127.0.0.1 "the agents' workers: RANK WORLD_SIZE MASTER_ADDR"

# 3. hpclaunch-train on the two nodes, under each launcher: the run ends, its metrics say a world of 2.
for launcher in flux agent; do
  submit "train-$launcher" --launcher "$launcher" -- "$HPCLAUNCH_TRAIN" --model autoencoder --synthetic \
    --synthetic-samples 1024 --global-batch-size 64 --epochs 1 --steps 6 --threads 1 --log-every 1 --no-validation \
    --metrics "$test_tmp/train-$launcher.jsonl" >/dev/null
done
for launcher in flux agent; do
  state=$(finished "train-$launcher" 300)
  assert_contains "$state" "COMPLETED" "hpclaunch-train under $launcher (output: $(tail -n 20 "$test_tmp/train-$launcher/output.log"))"
  grep -q '"world_size":2' "$test_tmp/train-$launcher.jsonl" \
    || fail "train-$launcher: the metrics name no world size of 2: $(head -c 600 "$test_tmp/train-$launcher.jsonl")"
  grep -q '"type":"step".*"step":6' "$test_tmp/train-$launcher.jsonl" || fail "train-$launcher: no step 6 in the metrics"
done
out=$(hl wait "$test_tmp/train-flux") || fail "wait on a completed Flux job exited $?: $out"
assert_contains "$out" "COMPLETED" "wait's last line"

# 4. A failing rank: rank 1 exits 3 while rank 0 would sleep; -o exit-on-error ends the step at once, not 30 s later.
start=$SECONDS
submit fail --launcher flux -- sh -c '[ "$RANK" = 1 ] && exit 3; sleep 100' >/dev/null
assert_contains "$(finished fail 60)" "FAILED (exit 3)" "status of the job whose rank 1 failed"
[ $((SECONDS - start)) -lt 25 ] || fail "the failed rank's job took $((SECONDS - start)) s: exit-on-error did not end the step"
rc=0
hl wait "$test_tmp/fail" >/dev/null 2>"$test_tmp/wait.err" || rc=$?
assert_eq 1 "$rc" "wait's exit code for a failed Flux job"

# 5. cancel --signal, then cancel, through the backend (flux job kill, flux cancel); an ended job has nothing to cancel.
id=$(submit long --launcher flux -- sh -c 'trap "echo rank $RANK warned" USR1; echo "started $RANK"; for i in $(seq 300); do sleep 0.2; done')
wait_until 60 "both ranks of the long job to start" '[ "$(grep -c "started" "$test_tmp/long/output.log" 2>/dev/null)" = 2 ]'
hl cancel --signal USR1 "$id" 2>"$test_tmp/signal.err" || fail "cancel --signal failed: $(cat "$test_tmp/signal.err")"
wait_until 30 "the ranks to be warned" 'grep -q "rank [01] warned" "$test_tmp/long/output.log"'
hl cancel "$id" 2>"$test_tmp/cancel.err" || fail "cancel failed: $(cat "$test_tmp/cancel.err")"
assert_contains "$(cat "$test_tmp/cancel.err")" "asked flux to cancel job $id"
assert_contains "$(finished long 60)" "CANCELED" "status of the cancelled job"
assert_fails "is unknown to the scheduler (it has finished); nothing to cancel" hl cancel "$id"

# 6. A sweep: Flux has no arrays, so each task is a job of its own, task 1 after task 0 (--max-concurrent 1), with
# its index put into its command (docs/sweeps.md, "A site that takes no arrays").
hl submit --site test-flux --site-file "$site_file" --nodes 1 --job-dir "$test_tmp/sweep" --array 2 --max-concurrent 1 \
  -- sh -c 'echo "task {task} of 2"' >/dev/null 2>"$test_tmp/sweep.err" \
  || fail "sweep submit failed: $(cat "$test_tmp/sweep.err")"
assert_contains "$(cat "$test_tmp/sweep.err")" "refuses job arrays: submit sends each of the 2 tasks as a job of its own"
wait_until 120 "both tasks to end" '! hl status "$test_tmp/sweep" | grep -qE "running|pending"'
assert_contains "$(hl status "$test_tmp/sweep")" "2 completed" "the sweep's tasks"
grep -q "task 1 of 2" "$test_tmp/sweep/tasks/1/output.log" || fail "task 1 wrote: $(cat "$test_tmp/sweep/tasks/1/output.log")"

# 7. The first-node rule: the script asks `flux hostlist` for the first node once and every task inherits it.
sed -e 's/^name: test-flux$/name: test-flux-first/' -e 's/^rendezvous: .*/rendezvous: {master_addr: first-node}/' \
  "$site_file" >"$test_tmp/first.yaml"
hl submit --site test-flux-first --site-file "$test_tmp/first.yaml" --nodes 2 --job-dir "$test_tmp/first" \
  -- sh -c 'echo "addr $RANK $MASTER_ADDR"' >/dev/null 2>"$test_tmp/first.err" || fail "first-node submit: $(cat "$test_tmp/first.err")"
assert_contains "$(finished first)" "COMPLETED" "the first-node job"
assert_eq "addr 0 node0
addr 1 node0" "$(grep -oE 'addr [0-9] .*' "$test_tmp/first/output.log" | sort)" "MASTER_ADDR of each rank"
echo "ok: flux submit, ranks, agent, hpclaunch-train, a failing rank, cancel, a sweep, first-node"
