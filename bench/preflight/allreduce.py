"""The Python peer of hpclaunch-probe's allreduce sweep: torch.distributed.all_reduce over gloo, the same sizes,
warm-up and iteration counts, timed the same way. Run one process per rank with RANK, WORLD_SIZE, MASTER_ADDR,
MASTER_PORT set; rank 0 prints one JSON line per size: {"bytes", "seconds"}."""
import json
import os
import sys
import time

import torch
import torch.distributed as dist


def sizes(lo, hi):
    out, b = [], lo
    while b <= hi:
        out.append(b)
        b *= 2
    if out and out[-1] != hi:
        out.append(hi)
    return out


def main():
    lo, hi = int(sys.argv[1]), int(sys.argv[2])
    torch.set_num_threads(1)
    dist.init_process_group("gloo")
    for nbytes in sizes(lo, hi):
        t = torch.ones(max(nbytes // 4, 1), dtype=torch.float32)
        iters = min(max((32 << 20) // nbytes, 1), 20)
        dist.all_reduce(t)
        dist.barrier()
        start = time.perf_counter()
        for _ in range(iters):
            dist.all_reduce(t)
        seconds = (time.perf_counter() - start) / iters
        if dist.get_rank() == 0:
            print(json.dumps({"bytes": nbytes, "seconds": seconds}), flush=True)
    dist.barrier()
    dist.destroy_process_group()


if __name__ == "__main__":
    main()
