# The worker of bench/agent/start/start.py: OUT. Writes the time of its own `import torch` to OUT/rRANK.
import os, sys, time
t0 = time.time()
import torch  # noqa
t1 = time.time()
with open(os.path.join(sys.argv[1], f"r{os.environ['RANK']}"), "w") as f:
    f.write(f"{t1 - t0}\n")
