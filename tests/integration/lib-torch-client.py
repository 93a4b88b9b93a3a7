"""A client written for torch 2.15, as a user's script (t0427, t0436): forms its gloo group from the environment
(init_process_group("gloo"), env://), allreduces the ranks, prints "NAME rank=R world=W sum=S", and with a second
argument, the rank that raises under @record (its error file then holds the exception).

usage: lib-torch-client.py NAME [CRASH_RANK]"""
import sys

import torch
import torch.distributed as dist
from torch.distributed.elastic.multiprocessing.errors import record


@record
def main():
    dist.init_process_group("gloo")
    t = torch.tensor([float(dist.get_rank())])
    dist.all_reduce(t)
    print(f"{sys.argv[1]} rank={dist.get_rank()} world={dist.get_world_size()} sum={int(t.item())}", flush=True)
    if sys.argv[2:] == [str(dist.get_rank())]:
        raise RuntimeError(f"{sys.argv[1]}: checkpoint directory /ckpt is not writable")
    dist.destroy_process_group()


main()
