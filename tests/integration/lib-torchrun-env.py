"""Compares the workers' environments under torchrun 2.15 and hpclaunch's agent, dumped as RANK.json files (t0420,
t0422). Each of torchrun's worker variables must be set by both, with the same value, but for the differences kept
by design: `documented` holds each with the value hpclaunch must have; its reasons are in docs/agent.md
("Deliberate differences"). Prints one line per difference; exits 1 if any.

usage: lib-torchrun-env.py REF_DIR OUR_DIR RANKS [--vary NAME]...  (--vary: the test gives the two runs different
values on purpose, e.g. --standalone's random run id)"""
import argparse
import json
import os
import sys

# torchrun 2.15's worker variables (LocalElasticAgent._start_workers, torch.distributed.launcher.api).
TORCHRUN_VARS = ["RANK", "LOCAL_RANK", "GROUP_RANK", "ROLE_RANK", "ROLE_NAME", "LOCAL_WORLD_SIZE", "WORLD_SIZE",
                 "GROUP_WORLD_SIZE", "ROLE_WORLD_SIZE", "MASTER_ADDR", "MASTER_PORT", "TORCHELASTIC_RESTART_COUNT",
                 "TORCHELASTIC_MAX_RESTARTS", "TORCHELASTIC_RUN_ID", "TORCHELASTIC_USE_AGENT_STORE",
                 "TORCHELASTIC_ERROR_FILE", "TORCHELASTIC_SIGNALS_TO_HANDLE", "TORCH_NCCL_ASYNC_ERROR_HANDLING",
                 "OMP_NUM_THREADS"]
CORES = len(os.sched_getaffinity(0))
DOCUMENTED = {
    "MASTER_ADDR": lambda v, env: v in ("127.0.0.1", "localhost"),  # the rendezvous host, not the agent store's
    "MASTER_PORT": lambda v, env: v.isdigit(),  # both free ports
    "TORCHELASTIC_ERROR_FILE": lambda v, env: v.endswith("/error.json"),  # per-worker paths under different roots
    "TORCHELASTIC_USE_AGENT_STORE": lambda v, env: v == "False",  # our store is no TCPStore: rank 0 serves one
    # the agent's cores shared among its workers, where torchrun sets 1
    "OMP_NUM_THREADS": lambda v, env: v == str(max(1, CORES // int(env["LOCAL_WORLD_SIZE"]))),
    # SIGUSR1/2 passed on too by default (Slurm's requeue warning)
    "TORCHELASTIC_SIGNALS_TO_HANDLE": lambda v, env: v == "SIGTERM,SIGINT,SIGHUP,SIGQUIT,SIGUSR1,SIGUSR2",
    # where hpclaunch.progress.step() writes, for the hang watch
    "HPCLAUNCH_PROGRESS_FILE": lambda v, env: v.endswith(f"/rank_{env['RANK']}/progress"),
}
EXTRA = {"PYTHONUNBUFFERED"}  # python started indirectly by a worker writes unbuffered into the agent's pipe too


def main():
    ap = argparse.ArgumentParser()
    ap.add_argument("ref")
    ap.add_argument("ours")
    ap.add_argument("ranks", type=int)
    ap.add_argument("--vary", action="append", default=[])
    args = ap.parse_args()
    ok = True

    def bad(msg):
        nonlocal ok
        print(msg)
        ok = False

    for rank in range(args.ranks):
        try:
            ref = json.load(open(f"{args.ref}/{rank}.json"))
            got = json.load(open(f"{args.ours}/{rank}.json"))
        except OSError as e:
            bad(f"rank {rank}: {e}")
            continue
        for k in TORCHRUN_VARS:
            if k not in ref and k != "OMP_NUM_THREADS":  # torchrun sets it only for more than one worker
                bad(f"rank {rank}: torchrun no longer sets {k}: update lib-torchrun-env.py and docs/agent.md")
        if set(ref) - set(got):
            bad(f"rank {rank}: torchrun sets {sorted(set(ref) - set(got))}, hpclaunch does not")
        for k in sorted(set(got) - set(ref) - EXTRA):
            if k in DOCUMENTED and DOCUMENTED[k](got[k], got):
                continue  # e.g. OMP_NUM_THREADS for one worker, which torchrun leaves unset
            bad(f"rank {rank}: hpclaunch sets {k}={got[k]}, torchrun does not")
        for k in sorted(set(ref) & set(got)):
            if k == "GROUP_RANK" or k in args.vary:  # GROUP_RANK: torchrun's in join order, checked through RANK
                continue
            if k in DOCUMENTED:
                if not DOCUMENTED[k](got[k], got):
                    bad(f"rank {rank}: {k}: hpclaunch '{got[k]}' (torchrun '{ref[k]}'), not as docs/agent.md says")
            elif ref[k] != got[k]:
                bad(f"rank {rank}: {k}: torchrun '{ref[k]}', hpclaunch '{got[k]}'")
        lws = int(got["LOCAL_WORLD_SIZE"])
        if int(got["GROUP_RANK"]) != rank // lws:
            bad(f"rank {rank}: GROUP_RANK {got['GROUP_RANK']}")
        if int(ref["GROUP_RANK"]) != int(ref["RANK"]) // lws:
            bad(f"torchrun rank {rank}: GROUP_RANK {ref['GROUP_RANK']}")
        print(f"rank {rank}: {len(ref)} variables compared")
    sys.exit(0 if ok else 1)


main()
