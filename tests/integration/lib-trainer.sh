# Sourced by the trainer's integration scripts (t05xx) after `set -euo pipefail`: skips the test when
# hpclaunch-train was not built, clears launcher variables, and starts ranks on loopback.
[ -n "${HPCLAUNCH_TRAIN:-}" ] || { echo "skip: HPCLAUNCH_TRAIN unset (hpclaunch-train not built)"; exit 77; }
unset RANK WORLD_SIZE LOCAL_RANK MASTER_ADDR MASTER_PORT
source "$(dirname "${BASH_SOURCE[0]}")/lib-port.sh"
source "$(dirname "${BASH_SOURCE[0]}")/lib-wait.sh"  # wait_until
# run_ranks N LOGPREFIX ARGS...: N ranks on loopback; fails unless every rank exits 0.
run_ranks() {
  local n=$1 log=$2 port pids=() r code=0
  shift 2
  port=$(free_port)
  for ((r = 0; r < n; r++)); do
    WORLD_SIZE=$n RANK=$r LOCAL_RANK=$r MASTER_ADDR=127.0.0.1 MASTER_PORT=$port HPCLAUNCH_TRAIN_TIMEOUT_S=120 \
      timeout 300 "$HPCLAUNCH_TRAIN" "$@" >"$log.$r" 2>&1 &
    pids+=($!)
  done
  for r in "${!pids[@]}"; do
    wait "${pids[$r]}" || { code=$?; echo "rank $r exited $code"; cat "$log.$r"; }
  done
  return $code
}
