#!/usr/bin/python3
"""hpclaunch agent against the real torchrun (the peers' venv's torch 2.15), same machine, same run, same worker.

launch:   2 agents x 2 workers that print their env and exit (/usr/bin/env, --no-python for both); wall time
          from starting the agents to both done.
recovery: rank 3 exits 1 on the first attempt, --max-restarts 1; time from its exit to every worker of the
          second attempt running (each records its start).
memory:   peak RSS (VmHWM) of each agent process, read while the second attempt runs.
Usage: bench.py HPCLAUNCH [REPEATS]   (prints a Markdown table; RESULTS.md holds one run)
Env: PEER_PYTHON, the python whose torchrun runs (default /opt/hpclaunch/peers-venv/bin/python, made by
     scripts/peers-venv.sh; /usr/bin/python3 gives Debian's torch 1.13, the peer of the runs before 2026-11-27).
"""
import os, socket, statistics, subprocess, sys, tempfile, time

HERE = os.path.dirname(os.path.abspath(__file__))
PY = os.environ.get("PEER_PYTHON", "/opt/hpclaunch/peers-venv/bin/python")
HPCLAUNCH = os.path.abspath(sys.argv[1])
REPEATS = int(sys.argv[2]) if len(sys.argv) > 2 else 5


def free_port():
    s = socket.socket()
    s.bind(("127.0.0.1", 0))
    return s.getsockname()[1]


def commands(kind, out, restarts, worker=None):
    port = free_port()
    worker = worker or [os.path.join(HERE, "worker.py"), out]
    if kind == "torchrun":
        no_python = ["--no_python"] if worker[0] == "/usr/bin/env" else []
        return [[PY, "-m", "torch.distributed.run"] + no_python + ["--nnodes", "2", "--nproc_per_node", "2", "--rdzv_backend", "c10d",
                 "--rdzv_endpoint", f"127.0.0.1:{port}", "--rdzv_id", "bench", "--max_restarts", str(restarts),
                 "--redirects", "1", "--tee", "1", "--log_dir", os.path.join(out, f"logs{i}")] + worker
                for i in range(2)]
    return [[HPCLAUNCH, "agent", "--nnodes", "2", "--node-rank", str(i), "--nproc-per-node", "2", "--rdzv-endpoint",
             f"127.0.0.1:{port}", "--rdzv-id", "bench", "--max-restarts", str(restarts)] + worker for i in range(2)]


def env(mode):
    e = dict(os.environ, BENCH_MODE=mode, HPCLAUNCH_PYTHON=PY, HPCLAUNCH_RDZV_SECRET="bench")
    return e


def launch(kind):
    with tempfile.TemporaryDirectory() as out:
        t0 = time.monotonic()
        procs = [subprocess.Popen(c, env=env("launch"), stdout=subprocess.DEVNULL, stderr=subprocess.DEVNULL)
                 for c in commands(kind, out, 0, ["/usr/bin/env"])]
        rcs = [p.wait(timeout=120) for p in procs]
        dt = time.monotonic() - t0
        assert rcs == [0, 0], f"{kind} launch failed: {rcs}"
        return dt


def hwm_kib(pid):
    with open(f"/proc/{pid}/status") as f:
        for line in f:
            if line.startswith("VmHWM:"):
                return int(line.split()[1])
    return 0


def recovery(kind):
    with tempfile.TemporaryDirectory() as out:
        logs = [open(os.path.join(out, f"agent{i}.log"), "w") for i in range(2)]
        procs = [subprocess.Popen(c, env=env("recover"), stdout=log, stderr=subprocess.STDOUT)
                 for c, log in zip(commands(kind, out, 1), logs)]
        deadline = time.monotonic() + 180
        starts = [os.path.join(out, f"start.{r}") for r in range(4)]
        while not all(os.path.exists(s) for s in starts):
            if time.monotonic() > deadline or any(p.poll() is not None for p in procs):
                for p in procs:
                    p.kill()
                    p.wait()
                tail = "".join(open(os.path.join(out, f"agent{i}.log")).read()[-1500:] for i in range(2))
                print(f"{kind}: the second attempt never ran; agents' output:\n{tail}", file=sys.stderr)
                return None
            time.sleep(0.01)
        rss = max(hwm_kib(p.pid) for p in procs)
        rcs = [p.wait(timeout=120) for p in procs]
        assert rcs == [0, 0], f"{kind} recovery run failed: {rcs}"
        time.sleep(0.05)
        fail = float(open(os.path.join(out, "fail")).read())
        running = max(float(open(s).read()) for s in starts)
        return running - fail, rss


def main():
    print(f"load average before: {os.getloadavg()[0]:.1f} on {os.cpu_count()} cores\n")
    res = {}
    for kind in ("hpclaunch", "torchrun"):
        n = REPEATS if kind == "hpclaunch" else max(1, REPEATS // 2)
        launches = [launch(kind) for _ in range(n)]
        recs = [r for r in (recovery(kind) for _ in range(n)) if r]
        if not recs:
            sys.exit(f"{kind}: no recovery run completed")
        res[kind] = (statistics.median(launches), statistics.median(r[0] for r in recs), max(r[1] for r in recs), n)
        print(f"{kind}: {len(recs)} of {n} recovery runs completed", file=sys.stderr)
    h, t = res["hpclaunch"], res["torchrun"]
    print(f"| measure | hpclaunch agent | torchrun (torch {torch_version()}) | ratio |")
    print("|---|---|---|---|")
    print(f"| launch, 2 agents x 2 workers (median of {h[3]} / {t[3]}) | {h[0]*1000:.0f} ms | {t[0]*1000:.0f} ms | {t[0]/h[0]:.0f}x faster |")
    print(f"| recovery, worker exit 1 to all running again | {h[1]*1000:.0f} ms | {t[1]*1000:.0f} ms | {t[1]/h[1]:.0f}x faster |")
    print(f"| agent peak RSS (VmHWM) | {h[2]/1024:.1f} MiB | {t[2]/1024:.1f} MiB | {t[2]/h[2]:.1f}x smaller |")


def torch_version():
    return subprocess.run([PY, "-c", "import torch; print(torch.__version__)"], capture_output=True, text=True).stdout.strip()


if __name__ == "__main__":
    main()
