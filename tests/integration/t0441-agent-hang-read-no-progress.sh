#!/usr/bin/env bash
# Hangs, as t0440 (its client and checks), the rest: rank 2 blocked in a read of a pipe no one writes, found and
# restarted; a crash loop that makes no progress after its first attempt stops with exit 93 ("no progress, no
# requeue"), restarts left; a silent program (no progress calls) is held to its output only with --hang-output; and
# a Lightning 2.6 Trainer with hpclaunch.progress.LightningProgress, whose rank 1 hangs in a training step, is
# found through the callback's reports and restarted to its end.
source "$(dirname "$0")/lib.sh"
need_hpclaunch
source "$HPCLAUNCH_SOURCE_DIR/tests/integration/lib-hang.sh"
check_hang read "os.read(r, 1)"

# No progress, no requeue: attempt 0 reaches step 1 (progress), attempts 1 and 2 get no further: stopped with 93.
two_nodes crash --max-restarts 5 --no-progress-limit 2 client.py crash
assert_eq 93 "$(cat crash.rc)" "the crash loop's exit: $(tail -n 20 crash0.out)"
assert_contains "$(cat crash0.out)" "(after 2 of 5 restarts)"
assert_contains "$(cat crash0.out)" "no progress in 2 attempts in a row: stopped, not requeued"
assert_contains "$(cat job-crash/failure.json)" '"no_progress": 2'
assert_contains "$(cat job-crash/progress.json)" '"attempts_without_progress":2'

# A program that reports nothing is not judged by default; with --hang-output, by its lines.
cat >silent.py <<'PY'
import os, sys, time
print("started", flush=True)
if os.environ["TORCHELASTIC_RESTART_COUNT"] == "0" and os.environ["RANK"] == "1":
    time.sleep(3600)
print("silent done", flush=True)
PY
silent() {  # NAME FLAG...: one agent, 2 workers, the silent script; status NAME.rc
  local rc=0
  env -i PATH=/usr/bin:/bin HOME="$test_tmp" TMPDIR="$TMPDIR" HPCLAUNCH_PYTHON="$py" \
    timeout "$2" "$HPCLAUNCH" agent --standalone --nproc-per-node 2 --max-restarts 1 --hang-timeout 2 "${@:3}" \
    silent.py >"$1.out" 2>&1 || rc=$?
  echo "$rc" >"$1.rc"
}
silent quiet 8
assert_eq 124 "$(cat quiet.rc)" "a silent program without --hang-output runs on (timeout's 124): $(cat quiet.out)"
assert_not_contains "$(cat quiet.out)" "hang:"
silent loud 60 --hang-output
assert_eq 0 "$(cat loud.rc)" "with --hang-output the silent hang restarts: $(cat loud.out)"
assert_contains "$(cat loud.out)" "printed nothing (no worker did) for "
assert_contains "$(cat loud.out)" "time.sleep(3600)"

cp "$HPCLAUNCH_SOURCE_DIR/tests/integration/lib_lightning_tiny.py" .
cat >lit.py <<'PY'
import os, time
import torch
import lightning as L
from hpclaunch.progress import LightningProgress
from lib_lightning_tiny import Tiny, data


class Hangs(Tiny):
    def training_step(self, batch, i):
        if self.global_step == 3 and self.global_rank == 1 and os.environ["TORCHELASTIC_RESTART_COUNT"] == "0":
            time.sleep(3600)  # a hang inside a step, while rank 0 waits in DDP's allreduce
        time.sleep(1.1)  # one progress write a second: each step is seen
        return super().training_step(batch, i)


torch.manual_seed(0)
trainer = L.Trainer(accelerator="cpu", devices=2, strategy="ddp", max_steps=5, logger=False, callbacks=[LightningProgress()],
                    enable_checkpointing=False, enable_progress_bar=False, enable_model_summary=False)
trainer.fit(Hangs(), data())
print(f"lightning rank={trainer.global_rank} steps={trainer.global_step} attempt={os.environ['TORCHELASTIC_RESTART_COUNT']}", flush=True)
os._exit(0)  # torch 2.15's gloo teardown (t0427 says why)
PY
rc=0
env -i PATH=/usr/bin:/bin HOME="$test_tmp" TMPDIR="$TMPDIR" PYTHONPATH="$HPCLAUNCH_SOURCE_DIR/python" HPCLAUNCH_PYTHON="$py" \
  timeout 300 "$HPCLAUNCH" agent --standalone --nproc-per-node 2 --max-restarts 1 --hang-timeout 4 \
  --hang-startup-timeout 120 lit.py >lit.out 2>&1 || rc=$?
assert_eq 0 "$rc" "the Lightning job whose rank 1 hung: $(tail -n 30 lit.out)"
assert_contains "$(cat lit.out)" "hang: rank 1 (local rank 1) on $(hostname) made no progress for " "Lightning"
assert_contains "$(cat lit.out)" "\`time.sleep(3600)  # a hang inside a step" "Lightning's frame"
for r in 0 1; do assert_contains "$(cat lit.out)" "lightning rank=$r steps=5 attempt=1" "Lightning rank $r"; done
echo ok
