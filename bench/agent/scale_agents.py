#!/usr/bin/python3
"""N real agents x 1 worker on this machine, hpclaunch agent beside torchrun.

Each of N agent processes (one per emulated node, all on loopback) runs one worker, `/bin/sh -c ': > DIR/RANK'`
(the same for both launchers; torchrun with --no_python), which marks the moment it ran by its file's mtime.
  running_s: start (before the first agent is spawned) to the last worker's mark: every worker running.
  done_s:    start to every agent process exited 0.
  pss_mib:   the largest sum of the agent processes' proportional memory (Pss: a page shared by k processes, such
             as the binary's, counts 1/k in each), read every ~200 ms while they run: the memory the agents take;
             per_agent_rss_mib the largest one's VmRSS (shared pages counted in full).
One JSON line per run on stdout. Usage: scale_agents.py HPCLAUNCH hpclaunch|torchrun N [N...]
       PEER_PYTHON: the python whose torchrun runs (default /opt/hpclaunch/peers-venv/bin/python, torch 2.15, made
                    by scripts/peers-venv.sh; /usr/bin/python3 gives Debian's torch 1.13, the earlier runs' peer)
       scale_agents.py --svg RUNS.jsonl OUT.svg    (the times against N, both axes logarithmic; no matplotlib
                                                      in Debian's python3 here, and `hpclaunch plot` draws training
                                                      curves: so a plain SVG)
A run that needs more memory than MemAvailable / 2 is not started (the machine is shared): it prints a
"skipped" line saying how much it would need at the per-agent figure of the runs so far.
"""
import json, os, socket, subprocess, sys, tempfile, time

PY = os.environ.get("PEER_PYTHON", "/opt/hpclaunch/peers-venv/bin/python")


def free_port():
    s = socket.socket()
    s.bind(("127.0.0.1", 0))
    return s.getsockname()[1]


def mem_kib(pid):
    """(Pss, Rss) of a process in KiB; zeros once it is gone."""
    pss = rss = 0
    try:
        with open(f"/proc/{pid}/smaps_rollup") as f:
            for line in f:
                if line.startswith("Pss:"):
                    pss = int(line.split()[1])
                elif line.startswith("Rss:"):
                    rss = int(line.split()[1])
    except OSError:
        pass
    return pss, rss


def mem_available_mib():
    with open("/proc/meminfo") as f:
        for line in f:
            if line.startswith("MemAvailable:"):
                return int(line.split()[1]) / 1024
    return 0.0


def commands(hpclaunch, kind, n, out):
    port = free_port()
    worker = ["/bin/sh", "-c", ': > "$BENCH_DIR/$RANK"']
    if kind == "torchrun":
        return [[PY, "-m", "torch.distributed.run", "--no_python", "--nnodes", str(n), "--nproc_per_node", "1",
                 "--rdzv_backend", "c10d", "--rdzv_endpoint", f"127.0.0.1:{port}", "--rdzv_id", "scale",
                 "--max_restarts", "0", "--redirects", "1", "--tee", "1", "--log_dir", os.path.join(out, f"logs{i}")]
                + worker for i in range(n)]
    return [[hpclaunch, "agent", "--nnodes", str(n), "--node-rank", str(i), "--nproc-per-node", "1",
             "--rdzv-endpoint", f"127.0.0.1:{port}", "--rdzv-id", "scale", "--max-restarts", "0"] + worker
            for i in range(n)]


def run(hpclaunch, kind, n):
    with tempfile.TemporaryDirectory() as out:
        marks = os.path.join(out, "marks")
        os.mkdir(marks)
        env = dict(os.environ, BENCH_DIR=marks, HPCLAUNCH_RDZV_SECRET="scale-bench")
        logs = open(os.path.join(out, "agents.log"), "w")
        cmds = commands(hpclaunch, kind, n, out)
        load = os.getloadavg()[0]
        pss_sum = rss_max = 0
        t0 = time.time()
        procs = [subprocess.Popen(c, env=env, stdout=subprocess.DEVNULL, stderr=logs) for c in cmds]
        spawned = time.time() - t0
        deadline = time.monotonic() + 600
        rcs = {}
        polls = 0
        while len(rcs) < n:
            for i, p in enumerate(procs):
                if i not in rcs and p.poll() is not None:
                    rcs[i] = p.returncode
            if polls % 10 == 0:
                mem = [mem_kib(p.pid) for i, p in enumerate(procs) if i not in rcs]
                pss_sum, rss_max = max(pss_sum, sum(m[0] for m in mem)), max([rss_max] + [m[1] for m in mem])
            polls += 1
            if time.monotonic() > deadline:
                for p in procs:
                    p.kill()
                    p.wait()
                return {"launcher": kind, "agents": n, "error": "not done within 600 s"}
            time.sleep(0.02)
        done = time.time() - t0  # within 20 ms of the last exit
        bad = [rc for rc in rcs.values() if rc != 0]
        files = os.listdir(marks)
        if bad or len(files) != n:
            logs.close()
            tail = open(os.path.join(out, "agents.log")).read()[-1500:]
            return {"launcher": kind, "agents": n, "error": f"{len(bad)} agents failed, {len(files)} of {n} workers ran",
                    "log_tail": tail}
        running = max(os.stat(os.path.join(marks, f)).st_mtime_ns for f in files) / 1e9 - t0
        return {"launcher": kind, "agents": n, "running_s": round(running, 3), "done_s": round(done, 3),
                "spawn_s": round(spawned, 3), "pss_mib": round(pss_sum / 1024, 1),
                "per_agent_rss_mib": round(rss_max / 1024, 1), "load1_before": round(load, 2),
                "cores": os.cpu_count()}


def torch_version():
    return subprocess.run([PY, "-c", "import torch; print(torch.__version__)"], capture_output=True, text=True).stdout.strip()


def svg_plot(path, out):
    import math
    runs = [json.loads(line) for line in open(path) if line.startswith("{")]
    series = {}  # (launcher, measure) -> [(N, seconds)]
    for r in runs:
        if "running_s" in r:
            for m in ("running_s", "done_s"):
                series.setdefault((r["launcher"], m), []).append((r["agents"], r[m]))
    ns = [n for pts in series.values() for n, _ in pts]
    ts = [t for pts in series.values() for _, t in pts]
    x0, x1 = math.log10(min(ns)) - 0.1, math.log10(max(ns)) + 0.1
    y0, y1 = math.floor(math.log10(min(ts))), math.ceil(math.log10(max(ts)))
    W, H, L, R, T, B = 720, 480, 70, 200, 40, 50

    def px(n):
        return L + (math.log10(n) - x0) / (x1 - x0) * (W - L - R)

    def py(t):
        return H - B - (math.log10(t) - y0) / (y1 - y0) * (H - T - B)

    o = [f'<svg xmlns="http://www.w3.org/2000/svg" width="{W}" height="{H}" font-family="sans-serif" font-size="12">',
         f'<rect width="{W}" height="{H}" fill="white"/>',
         f'<text x="{W / 2}" y="22" text-anchor="middle" font-size="14">N agents x 1 worker on one 2-core machine: '
         'start to all workers running / all done</text>']
    for e in range(y0, y1 + 1):
        y = py(10 ** e)
        o.append(f'<line x1="{L}" y1="{y:.1f}" x2="{W - R}" y2="{y:.1f}" stroke="#ddd"/>')
        o.append(f'<text x="{L - 6}" y="{y + 4:.1f}" text-anchor="end">{10 ** e:g} s</text>')
    for n in sorted(set(ns)):
        x = px(n)
        o.append(f'<line x1="{x:.1f}" y1="{T}" x2="{x:.1f}" y2="{H - B}" stroke="#ddd"/>')
        o.append(f'<text x="{x:.1f}" y="{H - B + 16}" text-anchor="middle">{n}</text>')
    o.append(f'<text x="{(L + W - R) / 2}" y="{H - 12}" text-anchor="middle">agents (N, log scale)</text>')
    colours = {"hpclaunch": "#1f77b4", "torchrun": "#d62728"}
    for i, ((launcher, m), pts) in enumerate(sorted(series.items())):
        pts.sort()
        dash = "" if m == "running_s" else ' stroke-dasharray="6,4"'
        c = colours.get(launcher, "black")
        path_d = " ".join(f"{'M' if j == 0 else 'L'}{px(n):.1f},{py(t):.1f}" for j, (n, t) in enumerate(pts))
        o.append(f'<path d="{path_d}" fill="none" stroke="{c}" stroke-width="2"{dash}/>')
        for n, t in pts:
            o.append(f'<circle cx="{px(n):.1f}" cy="{py(t):.1f}" r="3.5" fill="{c}"/>')
        ly = T + 20 + 22 * i
        o.append(f'<line x1="{W - R + 15}" y1="{ly}" x2="{W - R + 45}" y2="{ly}" stroke="{c}" stroke-width="2"{dash}/>')
        o.append(f'<text x="{W - R + 50}" y="{ly + 4}">{launcher}: {"all running" if m == "running_s" else "all done"}</text>')
    o.append("</svg>")
    with open(out, "w") as f:
        f.write("\n".join(o) + "\n")


def main():
    if sys.argv[1] == "--svg":
        return svg_plot(sys.argv[2], sys.argv[3])
    hpclaunch, kind = os.path.abspath(sys.argv[1]), sys.argv[2]
    per_agent_mib = 0.0
    for n in map(int, sys.argv[3:]):
        if n < 2:
            sys.exit(f"scale_agents.py: N must be at least 2, not {n}")
        need = per_agent_mib * n
        if need > mem_available_mib() / 2:
            print(json.dumps({"launcher": kind, "agents": n, "skipped": f"needs ~{need:.0f} MiB, more than half of "
                              f"the {mem_available_mib():.0f} MiB available on this shared machine"}), flush=True)
            continue
        r = run(hpclaunch, kind, n)
        if kind == "torchrun":
            r["torch"] = torch_version()
        if r.get("pss_mib"):
            per_agent_mib = max(per_agent_mib, r["pss_mib"] / n)
        print(json.dumps(r), flush=True)


if __name__ == "__main__":
    main()
