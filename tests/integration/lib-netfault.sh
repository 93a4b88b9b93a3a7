# shellcheck shell=bash
# Sourced by the network fault tests (t048x-netfault-*) after lib.sh: hosts n1..nK in network namespaces of the
# test's own (lib-netns.sh), an `hpclaunch agent` on each, run directly (no Slurm), training with
# hpclaunch-train on a checkpoint directory they share. Every namespace is removed on exit, failed or not.
source "$HPCLAUNCH_SOURCE_DIR/tests/integration/lib-netns.sh"
[ -x "${HPCLAUNCH_TRAIN:-}" ] || skip "hpclaunch-train was not built (no LibTorch)"
need_hpclaunch
[ "$(id -u)" = 0 ] || skip "needs root (ip netns)"

nf_pfx=nf$(printf '%s' "$test_tmp" | md5sum | cut -c1-6)
HPCLAUNCH_RDZV_SECRET=$(od -An -tx1 -N16 /dev/urandom | tr -d " \n")
export HPCLAUNCH_RDZV_SECRET
nf_port=29400  # the namespaces' own port space: free whatever runs on the machine

_nf_cleanup() {
  local rc=$? p
  set +e
  # What is left of the job (a failed test's agents and workers), then the namespaces, then lib.sh's clean-up.
  for p in $(pgrep -f "$test_tmp" | grep -vx "$$"); do kill -KILL "$p" 2>/dev/null; done
  netns_down "$nf_pfx" || rc=1
  _lib_cleanup $rc
}
trap '_nf_cleanup' EXIT

# nf_hosts NAME...: the namespaces, one per host (node rank i = i-th NAME).
nf_hosts() { nf_names=("$@"); netns_up "$nf_pfx" "$@"; }

# nf_agent I ARGS...: the agent of node rank I on host nf_names[I], in the background, bounded by `timeout`;
# its output in $test_tmp/aI.out, its exit code in aI.rc once it exits.
nf_agent() {
  local i=$1 host=${nf_names[$1]}
  shift
  rm -f "$test_tmp/a$i.rc"
  ( rc=0
    exec 3>&-
    netns_exec "$nf_pfx" "$host" env HPCLAUNCH_LOCAL_JOB=1 HPCLAUNCH_JOB_ID="$test_name" \
      HPCLAUNCH_NODELIST="$(IFS=,; echo "${nf_names[*]}")" HPCLAUNCH_NNODES=${#nf_names[@]} HPCLAUNCH_NODE_RANK="$i" \
      HPCLAUNCH_NODENAME="$host" HPCLAUNCH_MASTER_PORT=$nf_port HPCLAUNCH_TRAIN_STEP_SLEEP_MS=${nf_step_ms:-50} \
      timeout 240 "$HPCLAUNCH" agent --rdzv-endpoint "${nf_names[0]}:$nf_port" --nproc-per-node 1 --grace 3 "$@" \
      >"$test_tmp/a$i.out" 2>&1 || rc=$?
    echo $rc >"$test_tmp/a$i.rc" ) &
}
# nf_agent_pid I: the pid of node rank I's agent (the hpclaunch that `timeout` started in its namespace).
nf_agent_pid() {
  local p
  for p in $(ip netns pids "$nf_pfx-${nf_names[$1]}"); do
    [ "$(cat "/proc/$p/comm" 2>/dev/null)" = hpclaunch ] || continue
    [ "$(cat "/proc/$(ps -o ppid= "$p" | tr -d ' ')/comm" 2>/dev/null)" = timeout ] && { echo "$p"; return 0; }
  done
  fail "no agent of node rank $1 running in $nf_pfx-${nf_names[$1]}"
}
nf_rc() { cat "$test_tmp/a$1.rc" 2>/dev/null || echo running; }
nf_out() { cat "$test_tmp/a$1.out" 2>/dev/null || true; }
nf_all_out() { local i; for i in "${!nf_names[@]}"; do echo "--- agent $i on ${nf_names[$i]}:"; nf_out "$i"; done; }

# nf_wait_for WHAT CONDITION: until the shell condition holds (bounded: 120 s), else fail naming WHAT, with what
# every agent printed.
nf_wait_for() { wait_until --on-timeout 'echo "agents: $(nf_all_out)" >&2' 120 "$1" "$2"; }
# nf_step METRICS: the last step the trainer logged (0 before the first).
nf_step() { { grep -o '"type":"step".*"step":[0-9]*' "$1" 2>/dev/null || true; } | sed 's/.*"step"://' | tail -n 1 | grep . || echo 0; }

# The trainer's command line: checkpoints every 5 steps into DIR, resumes from it, metrics into DIR/metrics.jsonl.
# The global batch (192) splits evenly over 3 and 2 ranks, so a job re-formed with fewer nodes goes on.
nf_train() {  # DIR STEPS
  echo "$HPCLAUNCH_TRAIN" --model autoencoder --synthetic --synthetic-samples 4096 --global-batch-size 192 \
    --epochs 100000 --steps "$2" --threads 1 --log-every 1 --no-validation --checkpoint-dir "$1" \
    --checkpoint-every 5 --resume --metrics "$1/metrics.jsonl"
}

# Every step 1..N once in METRICS, in order (a resumed run truncates what came after its checkpoint).
nf_check_steps() {  # METRICS N
  local steps
  steps=$(grep '"type":"step"' "$1" | sed 's/.*"step":\([0-9]*\).*/\1/')
  assert_eq "$(seq 1 "$2" | xargs)" "$(echo "$steps" | xargs)" "steps in $1 (each once, in order)"
}

# nf_no_leftovers: no process of the job (agents, workers) is left, after a bounded wait.
nf_no_leftovers() {
  wait_until 8 "no process of the job left ($1)" '! pgrep -af "$test_tmp" | grep -v "^$$ "'
}
