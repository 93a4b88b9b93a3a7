# The benchmark's worker, the same for both launchers. BENCH_MODE=launch: print the env and exit.
# BENCH_MODE=recover: first attempt: rank 3 records the time and exits 1, the others wait to be stopped;
# second attempt: every rank records when it started, then waits a moment (so the agents' memory can be read).
# The attempt is told by the "fail" file, not TORCHELASTIC_RESTART_COUNT: torchrun counts restarts per agent,
# so the workers of the node whose workers did not fail see 0 again.
import os, sys, time

out = sys.argv[1]
rank = os.environ["RANK"]
if os.environ.get("BENCH_MODE") == "launch":
    print(" ".join(f"{k}={os.environ[k]}" for k in ("RANK", "LOCAL_RANK", "WORLD_SIZE", "MASTER_ADDR", "MASTER_PORT")))
    sys.exit(0)
if not os.path.exists(f"{out}/fail"):
    if rank == "3":
        with open(f"{out}/fail", "w") as f:
            f.write(repr(time.time()))
        sys.exit(1)
    time.sleep(60)
    sys.exit(0)
with open(f"{out}/start.{rank}", "w") as f:
    f.write(repr(time.time()))
time.sleep(1.5)
