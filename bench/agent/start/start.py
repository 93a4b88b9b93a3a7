#!/usr/bin/python3
"""A worker's own start under hpclaunch's agent and under torchrun 2.15 (the peers' venv), same machine, same run.

One node, 2 workers (import_worker.py: the time of its own `import torch`, written per rank). The launchers take
turns, REPEATS rounds, the order swapped every round so that neither always follows the other; each figure is the
mean and median over every worker of every round. Issue 53 found the import 0.3-0.5 s slower under the agent.
Usage: start.py HPCLAUNCH [REPEATS]   (prints a Markdown table)
"""
import os, statistics, subprocess, sys, tempfile

HERE = os.path.dirname(os.path.abspath(__file__))
PY = os.environ.get("PEER_PYTHON", "/opt/hpclaunch/peers-venv/bin/python")
HPCLAUNCH = os.path.abspath(sys.argv[1])
REPEATS = int(sys.argv[2]) if len(sys.argv) > 2 else 10


def one(kind):
    out = tempfile.mkdtemp(prefix=f"start-{kind}-")
    worker = [os.path.join(HERE, "import_worker.py"), out]
    if kind == "torchrun":
        cmd = [os.path.join(os.path.dirname(PY), "torchrun"), "--standalone", "--nproc-per-node", "2"] + worker
    else:
        cmd = [HPCLAUNCH, "agent", "--standalone", "--nproc-per-node", "2", "--", PY] + worker
    subprocess.run(cmd, env=dict(os.environ, HPCLAUNCH_PYTHON=PY), stdout=subprocess.DEVNULL,
                   stderr=subprocess.DEVNULL, check=True)
    return [float(open(os.path.join(out, f)).read()) for f in sorted(os.listdir(out))]


def main():
    times = {"torchrun": [], "hpclaunch": []}
    for i in range(REPEATS):
        order = ["torchrun", "hpclaunch"] if i % 2 == 0 else ["hpclaunch", "torchrun"]
        for kind in order:
            times[kind] += one(kind)
    print(f"| launcher | workers' `import torch`, mean | median | stdev | samples |")
    print("|---|---|---|---|---|")
    for kind, label in [("hpclaunch", "hpclaunch agent --standalone --nproc-per-node 2"),
                        ("torchrun", "torchrun 2.15 --standalone --nproc-per-node 2")]:
        v = times[kind]
        print(f"| {label} | {statistics.mean(v):.3f} s | {statistics.median(v):.3f} s | {statistics.stdev(v):.3f} s | {len(v)} |")


if __name__ == "__main__":
    main()
