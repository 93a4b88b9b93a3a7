# A torch 2.15 gloo client for the hang tests (t0440): 5 steps of a deterministic allreduce, each marked with
# hpclaunch.progress.step() before its collective. In attempt 0 (TORCHELASTIC_RESTART_COUNT) the rank HANG_RANK
# hangs at step 3 in the way argv[1] says, while the others wait for it in their allreduce:
#   stop   SIGSTOP to itself;   sleep  a sleep of an hour;   read  a blocking read of a pipe no one writes;
#   crash  (no hang) every attempt raises at step 2 after its progress at step 1: a crash loop without progress;
#   requeue (no hang) every run reports step 1 and exits 99, "saved, requeue me": a requeue loop without progress;
#   none   no fault.
# Each rank prints its final value, which must be the unfaulted run's. Its steps and the test's --hang-timeout 5
# are sized so that node 1 (rank 2's) sees the hang before node 0 (ranks 0 and 1) does.
import os
import signal
import sys
import time

import torch
import torch.distributed as dist
from torch.distributed.elastic.multiprocessing.errors import record

import hpclaunch.progress as progress


@record
def main():
    mode = sys.argv[1]
    if mode == "requeue":
        progress.step(1)
        sys.exit(99)
    dist.init_process_group("gloo")
    rank = dist.get_rank()
    attempt = int(os.environ["TORCHELASTIC_RESTART_COUNT"])
    hang_rank = int(os.environ.get("HANG_RANK", "2"))
    t = torch.tensor([float(rank + 1)])
    for step in range(1, 6):
        if mode == "crash" and step == 2:
            raise RuntimeError(f"crash loop: step 2 of attempt {attempt}")
        if attempt == 0 and rank == hang_rank and step == 3:
            if mode == "stop":
                os.kill(os.getpid(), signal.SIGSTOP)
            elif mode == "sleep":
                time.sleep(3600)
            elif mode == "read":
                r, w = os.pipe()
                os.read(r, 1)
        progress.step(step)
        dist.all_reduce(t)
        t = t * 0.5 + step
        # Rank 2's last progress is then a step (2.1 s) older than the others' when it hangs: the blame is clear,
        # and each step is written (hpclaunch.progress writes at most once a second).
        time.sleep(2.1)
    print(f"hang-client rank={rank} attempt={attempt} value={t.item():.6f}", flush=True)
    # Out without the interpreter's finalization, whose gloo teardown took seconds after the last progress (and may
    # abort: pytorch/pytorch#190489, docs/agent.md), which a short --hang-timeout would take for a hang.
    os._exit(0)


if __name__ == "__main__":
    main()
