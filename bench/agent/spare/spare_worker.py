# The worker of bench/agent/spare/spare.py: OUT. A gloo process group of torch 2.15 (env://, as both launchers set
# it up); each step an allreduce and 0.1 s of "work", each step recorded as a line of OUT/steps_NODE:
# "WALL_TIME ATTEMPT WORLD_SIZE GROUP_RANK STEP" (NODE: BENCH_NODE, the agent's, set by the bench).
import os, sys, time

out = sys.argv[1]
import torch  # noqa: E402
import torch.distributed as dist  # noqa: E402

dist.init_process_group("gloo")
node, attempt = os.environ["BENCH_NODE"], os.environ.get("TORCHELASTIC_RESTART_COUNT", "0")
world, group = dist.get_world_size(), os.environ.get("GROUP_RANK", "?")
t = torch.ones(1024)
with open(f"{out}/steps_{node}", "a", buffering=1) as log:
    for step in range(1, 10_000):
        dist.all_reduce(t)
        log.write(f"{time.time()!r} {attempt} {world} {group} {step}\n")
        if os.path.exists(f"{out}/stop"):
            break
        time.sleep(0.1)
dist.destroy_process_group()
