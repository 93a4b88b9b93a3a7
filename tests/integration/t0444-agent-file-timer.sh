#!/usr/bin/env bash
# torchrun's named-pipe watchdog, served by the agent (docs/agent.md, "Hangs"): a torch 2.15 script whose workers
# use torch's own FileTimerClient (`timer.expires(after=2)`) with TORCHELASTIC_ENABLE_FILE_TIMER=1, rank 1 sleeping
# past its scope in attempt 0. Side by side with torchrun 2.15 (the peers' venv): both kill the worker with the
# client's SIGKILL; torchrun then kills itself too (torch's FileTimerServer reaps its own process: exit 137, its
# restarts unused), where the agent restarts the group and the job ends 0.
source "$(dirname "$0")/lib.sh"
need_hpclaunch
py=$(peer_python)
cd "$test_tmp"
cat >ft.py <<'PY'
import os, time
import torch.distributed.elastic.timer as timer
from torch.distributed.elastic.timer import FileTimerClient

timer.configure(FileTimerClient(file_path=os.environ["TORCHELASTIC_TIMER_FILE"]))
rank = int(os.environ["RANK"])
attempt = int(os.environ["TORCHELASTIC_RESTART_COUNT"])
with timer.expires(after=2, scope="step"):
    if rank == 1 and attempt == 0:
        time.sleep(60)  # past the scope's 2 s: the watchdog kills it
print(f"ft rank={rank} attempt={attempt} done", flush=True)
PY
run() {  # NAME LAUNCHER...: status in NAME.rc, output in NAME.out
  local rc=0
  mkdir -p "$TMPDIR/$1"
  env -i PATH=/usr/bin:/bin HOME="$test_tmp" TMPDIR="$TMPDIR/$1" HPCLAUNCH_PYTHON="$py" TORCHELASTIC_ENABLE_FILE_TIMER=1 \
    timeout 120 "${@:2}" --standalone --nproc-per-node 2 --max-restarts 1 ft.py >"$1.out" 2>&1 || rc=$?
  echo "$rc" >"$1.rc"
}
run torchrun "$(dirname "$py")/torchrun"
assert_eq 137 "$(cat torchrun.rc)" "torchrun 2.15 with an expired file timer kills itself: $(tail -n 5 torchrun.out)"
assert_contains "$(cat torchrun.out)" "ft rank=0 attempt=0 done"
assert_not_contains "$(cat torchrun.out)" "ft rank=1 attempt=0 done" "torchrun's watchdog killed rank 1"
run hpclaunch "$HPCLAUNCH" agent
assert_eq 0 "$(cat hpclaunch.rc)" "the agent with an expired file timer: $(cat hpclaunch.out)"
out=$(cat hpclaunch.out)
assert_contains "$out" "file timer: scope 'step' of rank 1 (pid "
assert_contains "$out" "killing it with SIGKILL (torchrun's watchdog)"
assert_contains "$out" "worker failed: rank 1 (local rank 1) on $(hostname) was killed by SIGKILL"
assert_not_contains "$out" "ft rank=1 attempt=0 done"
for r in 0 1; do assert_contains "$out" "ft rank=$r attempt=1 done" "rank $r after the restart"; done
# The pipe is the agent's to remove; with TORCHELASTIC_TIMER_FILE the path is the user's.
assert_eq "" "$(find "$TMPDIR/hpclaunch" -name 'watchdog_timer_*')" "the agent's pipe left behind"
rc=0
env -i PATH=/usr/bin:/bin HOME="$test_tmp" HPCLAUNCH_PYTHON="$py" TORCHELASTIC_ENABLE_FILE_TIMER=1 \
  TORCHELASTIC_TIMER_FILE="$test_tmp/my-timer" timeout 120 "$HPCLAUNCH" agent --standalone --nproc-per-node 2 \
  --max-restarts 1 ft.py >named.out 2>&1 || rc=$?
assert_eq 0 "$rc" "with TORCHELASTIC_TIMER_FILE: $(cat named.out)"
assert_contains "$(cat named.out)" "ft rank=1 attempt=1 done"
echo ok
