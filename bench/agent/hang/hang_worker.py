# The worker of bench/agent/hang/hang.py: OUT MODE T. Records its start (OUT/start_ATTEMPT_RANK) and the end of
# `import torch` (ready_...), then takes 6 steps of 0.5 s, reporting each (hpclaunch.progress, or a file timer's
# expires(after=T) around it); rank 1 of attempt 0 stops itself at step 3 after writing OUT/hang.
import os, signal, sys, time

out, mode, limit = sys.argv[1], sys.argv[2], float(sys.argv[3])
rank, attempt = int(os.environ["RANK"]), int(os.environ["TORCHELASTIC_RESTART_COUNT"])
open(f"{out}/start_{attempt}_{rank}", "w").write(repr(time.time()))
import torch  # noqa: E402,F401  (the program's own start)
open(f"{out}/ready_{attempt}_{rank}", "w").write(repr(time.time()))
if mode == "timer":
    import torch.distributed.elastic.timer as timer
    timer.configure(timer.FileTimerClient(file_path=os.environ["TORCHELASTIC_TIMER_FILE"]))
else:
    import hpclaunch.progress as progress
for step in range(1, 7):
    def work():
        if attempt == 0 and rank == 1 and step == 3:
            open(f"{out}/hang", "w").write(repr(time.time()))
            os.kill(os.getpid(), signal.SIGSTOP)
        time.sleep(0.5)
    if mode == "timer":
        with timer.expires(after=limit, scope="step"):
            work()
    else:
        progress.step(step)
        work()
