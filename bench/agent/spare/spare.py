#!/usr/bin/python3
"""A lost node replaced by a spare, hpclaunch's agent against torchrun 2.15 (the peers' venv), same machine, same run,
same worker.

Three agents on this machine stand for three nodes (node ranks 0-2, one worker each, the worker: spare_worker.py,
torch 2.15 gloo). The job wants 2 nodes; the third waits:
  hpclaunch agent --nnodes 2 --spares 1 (the store on node 0);
  torchrun --nnodes 2 --rdzv-backend c10d (node 0 started first, so that it hosts the store; the third agent lands
    in the c10d rendezvous's redundancy list).
Once the job has trained 20 steps, node 1 is lost: its agent and its worker are SIGKILLed together, as a node that
dies. Measured from the kill:
  training again   to the first step of the new group (2 nodes, the spare among them), by the spare's own record.
Then the bench stops the workers (OUT/stop) and reads the exit codes. Both get --max-restarts 3: a survivor's worker
fails when its peer vanishes, which may count as a restart.
Usage: spare.py HPCLAUNCH [REPEATS]   (prints a Markdown table)
"""
import os, signal, statistics, subprocess, sys, tempfile, time

HERE = os.path.dirname(os.path.abspath(__file__))
PY = os.environ.get("PEER_PYTHON", "/opt/hpclaunch/peers-venv/bin/python")
HPCLAUNCH = os.path.abspath(sys.argv[1])
REPEATS = int(sys.argv[2]) if len(sys.argv) > 2 else 3


def descendants(pid):
    kids = {}
    for p in os.listdir("/proc"):
        if p.isdigit():
            try:
                ppid = int(open(f"/proc/{p}/stat").read().rsplit(")", 1)[1].split()[1])
            except OSError:
                continue
            kids.setdefault(ppid, []).append(int(p))
    out, todo = [], [pid]
    while todo:
        p = todo.pop()
        out.append(p)
        todo += kids.get(p, [])
    return out


def steps(out, node):
    try:
        return [line.split() for line in open(f"{out}/steps_{node}")]
    except OSError:
        return []


def one(kind, port):
    out = tempfile.mkdtemp(prefix=f"spare-{kind}-")
    worker = [os.path.join(HERE, "spare_worker.py"), out]
    agents = []
    for node in range(3):
        env = dict(os.environ, BENCH_NODE=str(node), HPCLAUNCH_PYTHON=PY, HPCLAUNCH_RDZV_SECRET="bench-spare")
        if kind == "torchrun":
            cmd = [os.path.join(os.path.dirname(PY), "torchrun"), "--nnodes", "2", "--nproc-per-node", "1",
                   "--rdzv-backend", "c10d", "--rdzv-endpoint", f"127.0.0.1:{port}", "--rdzv-id", "spare",
                   "--max-restarts", "3"] + worker
        else:
            cmd = [HPCLAUNCH, "agent", "--nnodes", "2", "--spares", "1", "--node-rank", str(node), "--nproc-per-node",
                   "1", "--rdzv-endpoint", f"127.0.0.1:{port}", "--max-restarts", "3", "-v"] + worker
        log = open(f"{out}/agent_{node}.log", "w")
        agents.append(subprocess.Popen(cmd, env=env, stdout=log, stderr=subprocess.STDOUT, start_new_session=True))
        if node == 0:
            time.sleep(2)  # node 0 first: it serves the store (torchrun: the first to bind it)
    deadline = time.time() + 120
    while time.time() < deadline and max((len(steps(out, n)) for n in (0, 1)), default=0) < 20:
        time.sleep(0.05)
    waiting = [n for n in range(3) if not steps(out, n)]
    lost = 1 if 2 in waiting else None  # the node to kill: a running one that does not serve the store
    if lost is None:
        lost = 2 if 1 in waiting else None
    result = {"rc": None, "again": None, "spare": waiting[0] if waiting else None}
    if lost is not None:
        victims = descendants(agents[lost].pid)
        kill = time.time()
        for p in victims:
            try:
                os.kill(p, signal.SIGKILL)
            except ProcessLookupError:
                pass
        spare = result["spare"]
        while time.time() < kill + 120:
            s = [x for x in steps(out, spare) if float(x[0]) > kill and x[2] == "2"]
            if s:
                result["again"] = float(s[0][0]) - kill
                break
            time.sleep(0.05)
    open(f"{out}/stop", "w").close()
    rcs = []
    for i, a in enumerate(agents):
        try:
            rcs.append(a.wait(timeout=60))
        except subprocess.TimeoutExpired:
            for p in descendants(a.pid):
                os.kill(p, signal.SIGKILL)
            rcs.append("hung")
    result["rc"] = ",".join(str(r) for r in rcs)
    result["out"] = out
    return result


def fmt(xs):
    xs = [x for x in xs if x is not None]
    return f"{statistics.median(xs):.2f} s ({min(xs):.2f}-{max(xs):.2f})" if xs else "-"


def main():
    rows = []
    port = 29650
    for kind, label in [("hpclaunch", "hpclaunch agent --nnodes 2 --spares 1"),
                        ("torchrun", "torchrun 2.15 --nnodes 2, a third agent beside it")]:
        rs = []
        for _ in range(REPEATS):
            port += 1
            rs.append(one(kind, port))
        rows.append((label, fmt([r["again"] for r in rs]), f"{sum(r['again'] is not None for r in rs)} of {REPEATS}",
                     "; ".join(r["rc"] for r in rs)))
        for r in rs:
            print(f"<!-- {kind}: {r} -->", file=sys.stderr)
    print(f"| launcher | lost node to training again (median, range) | runs trained again | exit codes of nodes 0,1,2 |")
    print("|---|---|---|---|")
    for r in rows:
        print("| " + " | ".join(r) + " |")


if __name__ == "__main__":
    main()
