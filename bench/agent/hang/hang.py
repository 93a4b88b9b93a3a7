#!/usr/bin/python3
"""A hang's cost, hpclaunch's agent against torchrun 2.15 (the peers' venv), same machine, same run, same worker.

One node, 2 workers (the worker: hang_worker.py, torch 2.15 but no process group, so the times are the launcher's).
Rank 1 hangs at its step 3 of attempt 0 (SIGSTOP to itself), having written the wall time first. Measured:
  found      from the hang's start to the agent's word that it is hung (the launcher's log line, time-stamped as
             read), or to the worker's kill (the file timer);
  restarted  from the hang's start to every worker of the next attempt running (each records its start);
  ready      to every worker of the next attempt past `import torch` (the program's own start).
Configurations:
  hpclaunch --hang-timeout T (progress by hpclaunch.progress.step, stacks with py-spy),
  hpclaunch with torchrun's file timer (expires(after=T) around each step),
  torchrun 2.15 with its file timer (TORCHELASTIC_ENABLE_FILE_TIMER=1): it kills the worker and then itself, so
  there is no restart to time.
NVIDIA's ft_launcher (nvidia-resiliency-ext) 0.7.0 is not run: the package index here serves 0.4.1 at newest.
Usage: hang.py HPCLAUNCH [REPEATS] [T]   (prints a Markdown table)
"""
import os, statistics, subprocess, sys, tempfile, time

HERE = os.path.dirname(os.path.abspath(__file__))
PY = os.environ.get("PEER_PYTHON", "/opt/hpclaunch/peers-venv/bin/python")
HPCLAUNCH = os.path.abspath(sys.argv[1])
REPEATS = int(sys.argv[2]) if len(sys.argv) > 2 else 3
T = float(sys.argv[3]) if len(sys.argv) > 3 else 3
SRC_PY = os.path.join(HERE, "..", "..", "..", "python")


def run(kind, out):
    worker = [os.path.join(HERE, "hang_worker.py"), out, "timer" if kind != "hpclaunch" else "progress", str(T)]
    env = dict(os.environ, PYTHONPATH=os.path.abspath(SRC_PY), HPCLAUNCH_PYTHON=PY, TMPDIR=out)
    if kind == "torchrun":
        cmd = [os.path.join(os.path.dirname(PY), "torchrun"), "--standalone", "--nproc-per-node", "2",
               "--max-restarts", "1"] + worker
        env["TORCHELASTIC_ENABLE_FILE_TIMER"] = "1"
    else:
        cmd = [HPCLAUNCH, "agent", "--standalone", "--nproc-per-node", "2", "--max-restarts", "1"]
        if kind == "hpclaunch":
            cmd += ["--hang-timeout", str(T), "--hang-startup-timeout", "60"]
        else:
            env["TORCHELASTIC_ENABLE_FILE_TIMER"] = "1"
        cmd += worker
    p = subprocess.Popen(cmd, env=env, stdout=subprocess.PIPE, stderr=subprocess.STDOUT, text=True)
    found = None
    for line in p.stdout:  # time-stamped as read
        if found is None and ("hang: rank" in line or "file timer: scope" in line or "Reaping worker_pid" in line):
            found = time.time()
    rc = p.wait()
    return rc, found


def stamps(out, name):
    vals = []
    for f in os.listdir(out):
        if f.startswith(name):
            vals.append(float(open(os.path.join(out, f)).read()))
    return vals


def one(kind):
    out = tempfile.mkdtemp(prefix=f"hang-{kind}-")
    rc, found = run(kind, out)
    hang = stamps(out, "hang")
    start1, ready1 = stamps(out, "start_1_"), stamps(out, "ready_1_")
    if not hang:
        return {"rc": rc}
    h = hang[0]
    r = {"rc": rc, "found": (found - h) if found else None}
    if len(start1) == 2:
        r["restarted"] = max(start1) - h
        r["ready"] = max(ready1) - h if len(ready1) == 2 else None
    return r


def fmt(xs):
    xs = [x for x in xs if x is not None]
    return f"{statistics.median(xs):.2f} s" if xs else "-"


def main():
    rows = []
    for kind, label in [("hpclaunch", f"hpclaunch agent --hang-timeout {T:g}"),
                        ("hpclaunch-timer", f"hpclaunch agent, torchrun's file timer (expires(after={T:g}))"),
                        ("torchrun", f"torchrun 2.15, its file timer (expires(after={T:g}))")]:
        rs = [one(kind) for _ in range(REPEATS)]
        rows.append((label, fmt([r.get("found") for r in rs]), fmt([r.get("restarted") for r in rs]),
                     fmt([r.get("ready") for r in rs]), ",".join(str(r["rc"]) for r in rs)))
    print(f"| launcher (median of {REPEATS}) | hang to found | hang to next attempt started | to past `import torch` | exit codes |")
    print("|---|---|---|---|---|")
    for r in rows:
        print("| " + " | ".join(r) + " |")


if __name__ == "__main__":
    main()
