#!/usr/bin/env bash
# hpclaunch agent on loopback: two agents (as the emulated nodes of a local job, defaults from the environment)
# × two workers. Checks torchrun's variables, ranks, line prefixes, per-rank log files, --local-ranks-filter,
# --standalone, and that no process of the job is left.
source "$(dirname "$0")/lib.sh"
need_hpclaunch

export HPCLAUNCH_RDZV_SECRET=0123456789abcdef
port=$(free_port)
# The environment `hpclaunch local-srun` gives the task of emulated node $1 (docs/CONTRACTS.md).
node_env() {
  echo HPCLAUNCH_LOCAL_JOB=1 HPCLAUNCH_JOB_ID=local-t0400 "HPCLAUNCH_NODELIST=node[0-1]" HPCLAUNCH_NNODES=2 \
    HPCLAUNCH_NODE_RANK="$1" HPCLAUNCH_NODENAME="node$1" HPCLAUNCH_GPUS=0,1 HPCLAUNCH_MASTER_ADDR_RULE=fixed \
    HPCLAUNCH_MASTER_ADDR_FIXED=127.0.0.1 HPCLAUNCH_MASTER_PORT="$port"
}
# run_pair ARGS...: both agents with the same flags, each bounded; rc in $test_tmp/aN.rc, output in aN.out.
run_pair() {
  local i
  for i in 0 1; do
    ( rc=0; env $(node_env $i) timeout 60 "$HPCLAUNCH" agent "$@" >"$test_tmp/a$i.out" 2>&1 || rc=$?
      echo $rc >"$test_tmp/a$i.rc" ) &
  done
  wait
}
no_leftovers() {
  local left
  left=$(pgrep -af "$test_tmp" | grep -v "^$$ " || true)
  [ -z "$left" ] || fail "processes of the job left: $left"
}

cat >"$test_tmp/printenv.sh" <<'EOF2'
#!/bin/sh
for v in RANK LOCAL_RANK WORLD_SIZE LOCAL_WORLD_SIZE GROUP_RANK GROUP_WORLD_SIZE ROLE_NAME ROLE_RANK ROLE_WORLD_SIZE \
         MASTER_ADDR TORCHELASTIC_RESTART_COUNT TORCHELASTIC_MAX_RESTARTS TORCHELASTIC_RUN_ID \
         TORCHELASTIC_USE_AGENT_STORE OMP_NUM_THREADS CUDA_VISIBLE_DEVICES PYTHONUNBUFFERED; do
  printf '%s=%s ' "$v" "$(printenv $v)"
done
echo
echo "port $MASTER_PORT"
[ -n "$TORCHELASTIC_ERROR_FILE" ] && echo "errfile ok"
printf 'no newline at the end'
EOF2
chmod +x "$test_tmp/printenv.sh"

# 1. Two agents, two workers each, every default from the local job's environment.
run_pair --nproc-per-node 2 -- "$test_tmp/printenv.sh"
assert_eq 0 "$(cat "$test_tmp/a0.rc")" "node 0 agent exit code ($(cat "$test_tmp/a0.out"))"
assert_eq 0 "$(cat "$test_tmp/a1.rc")" "node 1 agent exit code ($(cat "$test_tmp/a1.out"))"
for r in 0 1 2 3; do
  n=$((r / 2)); l=$((r % 2))
  line=$(grep "^\[node$n:$r\] RANK=" "$test_tmp/a$n.out") || fail "no env line of rank $r: $(cat "$test_tmp/a$n.out")"
  assert_eq "[node$n:$r] RANK=$r LOCAL_RANK=$l WORLD_SIZE=4 LOCAL_WORLD_SIZE=2 GROUP_RANK=$n GROUP_WORLD_SIZE=2 ROLE_NAME=default ROLE_RANK=$r ROLE_WORLD_SIZE=4 MASTER_ADDR=127.0.0.1 TORCHELASTIC_RESTART_COUNT=0 TORCHELASTIC_MAX_RESTARTS=0 TORCHELASTIC_RUN_ID=local-t0400 TORCHELASTIC_USE_AGENT_STORE=False OMP_NUM_THREADS=$(( $(nproc) / 2 > 0 ? $(nproc) / 2 : 1 )) CUDA_VISIBLE_DEVICES= PYTHONUNBUFFERED=1 " "$line" "rank $r env"
  grep -q "^\[node$n:$r\] no newline at the end$" "$test_tmp/a$n.out" || fail "last partial line of rank $r not whole"
  grep -q "^\[node$n:$r\] errfile ok$" "$test_tmp/a$n.out" || fail "rank $r has no TORCHELASTIC_ERROR_FILE"
done
ports=$(grep -ho '\] port [0-9]*' "$test_tmp"/a[01].out | sort -u | wc -l)
assert_eq 1 "$ports" "one MASTER_PORT for all ranks"
assert_not_contains "$(cat "$test_tmp"/a[01].out)" "port 29500" "MASTER_PORT"
no_leftovers

# 2. Per-rank log files (--log-dir: files and console), console only from local rank 0.
run_pair --nproc-per-node 2 --log-dir "$test_tmp/logs" --local-ranks-filter 0 -- "$test_tmp/printenv.sh"
assert_eq "0 0" "$(cat "$test_tmp/a0.rc") $(cat "$test_tmp/a1.rc")" "exit codes with --log-dir"
for r in 0 1 2 3; do
  assert_file "$test_tmp/logs/attempt_0/rank_$r/stdout.log"
  grep -q "^RANK=$r " "$test_tmp/logs/attempt_0/rank_$r/stdout.log" || fail "log file of rank $r lacks its env"
done
grep -q '^\[node0:1\]' "$test_tmp/a0.out" && fail "--local-ranks-filter 0 still shows local rank 1"
grep -q '^\[node1:2\] RANK=2' "$test_tmp/a1.out" || fail "--local-ranks-filter 0 hides local rank 0 of node 1"

# 3. --standalone: one node, no environment needed, a free store port.
out=$(env -u HPCLAUNCH_RDZV_SECRET timeout 60 "$HPCLAUNCH" agent --standalone --nproc-per-node 3 -- \
      "$test_tmp/printenv.sh" 2>&1) || fail "standalone failed: $out"
assert_eq 3 "$(grep -c 'WORLD_SIZE=3 ' <<<"$out")" "standalone workers"
# As torchrun's, a standalone run's id is new each time (a uuid4), unless --rdzv-id names one.
ids=()
for run in 1 2; do
  ids+=("$(timeout 60 "$HPCLAUNCH" agent --standalone -- sh -c 'echo "$TORCHELASTIC_RUN_ID"' 2>&1 | sed 's/^\[[^]]*\] //')")
done
[[ ${ids[0]} =~ ^[0-9a-f]{8}-[0-9a-f]{4}-4[0-9a-f]{3}-[89ab][0-9a-f]{3}-[0-9a-f]{12}$ ]] || fail "standalone run id '${ids[0]}' is no uuid4"
[ "${ids[0]}" != "${ids[1]}" ] || fail "two standalone runs had the same run id ${ids[0]}"
# Bare console lines, as torchrun's, for a log grepped by its own words (docs/agent.md).
assert_eq "iter 1" "$(timeout 60 "$HPCLAUNCH" agent --standalone --log-line-prefix-template '' -- echo "iter 1" 2>/dev/null)" \
  "a bare line"
assert_eq job7 "$(timeout 60 "$HPCLAUNCH" agent --standalone --rdzv-id job7 -- sh -c 'echo "$TORCHELASTIC_RUN_ID"' 2>&1 | sed 's/^\[[^]]*\] //')" \
  "a standalone run's --rdzv-id"

# A failed worker without an error file (no @record): its last lines of stderr are quoted in the summary and in
# failure.json (torchrun says only "exited with code 3"). Written right before its exit, they are still caught.
mkdir -p "$test_tmp/tailjob"
rc=0
HPCLAUNCH_JOB_DIR=$test_tmp/tailjob timeout 60 "$HPCLAUNCH" agent --standalone -- \
  sh -c 'seq 1 30 >&2; echo "OSError: [Errno 28] No space left on device: /ckpt" >&2; exit 3' >"$test_tmp/tail.out" 2>&1 || rc=$?
assert_eq 1 "$rc" "exit code of a job whose worker failed"
assert_contains "$(cat "$test_tmp/tail.out")" "last lines of rank 0's stderr:
  22
  23" "the summary"
assert_contains "$(tail -n 1 "$test_tmp/tail.out")" "  OSError: [Errno 28] No space left on device: /ckpt" "the summary's last line"
assert_contains "$(cat "$test_tmp/tailjob/failure.json")" '"stderr_tail": "22\n23\n' "failure.json"
# A process the worker left in a session of its own holds its pipes: the failure is still reported (2 s after the
# exit, without waiting for that process's later lines), before that process's "late" line.
timeout 60 "$HPCLAUNCH" agent --standalone -- \
  sh -c 'setsid sh -c "sleep 5; echo late >&2" & sleep 0.5; exit 3' >"$test_tmp/linger.out" 2>&1 || true
order=$(grep -n -e "worker failed: rank 0" -e "late$" "$test_tmp/linger.out" | cut -d: -f1 | xargs)
[ "$(wc -w <<<"$order")" = 2 ] && [ "${order%% *}" -lt "${order##* }" ] ||
  fail "the failure was not reported before the lingering process's line: $(cat "$test_tmp/linger.out")"
# The failure that came first is the root cause, though the rank it got stopped drained its output sooner (the
# failed rank's lingering process holds its pipes): the exits are reported in the order they came.
timeout 60 "$HPCLAUNCH" agent --standalone --nproc-per-node 2 -- sh -c '
  if [ "$RANK" = 1 ]; then setsid sh -c "sleep 5" & sleep 0.5; exit 3; fi
  trap "exit 143" TERM; while :; do sleep 0.05; done' >"$test_tmp/order.out" 2>&1 || true
assert_contains "$(cat "$test_tmp/order.out")" "root cause: rank 1 (local rank 1)"
# 4. A command that does not exist is an error naming it, before anything starts.
assert_fails "command 'no-such-cmd-t0400' not found" timeout 60 "$HPCLAUNCH" agent --standalone -- no-such-cmd-t0400
# 5. A multi-node agent without the job's secret refuses to start (exit 2), naming the variable and the fix.
rc=0
env -u HPCLAUNCH_RDZV_SECRET timeout 60 "$HPCLAUNCH" agent --nnodes 2 --node-rank 0 --nproc-per-node 1 \
  --rdzv-endpoint 127.0.0.1:29999 -- true >"$test_tmp/nosecret.out" 2>&1 || rc=$?
assert_eq 2 "$rc" "exit code of a multi-node agent without HPCLAUNCH_RDZV_SECRET"
assert_contains "$(cat "$test_tmp/nosecret.out")" "hpclaunch: error: HPCLAUNCH_RDZV_SECRET: is not set; the agents of a multi-node job trust only peers that know it"
no_leftovers
