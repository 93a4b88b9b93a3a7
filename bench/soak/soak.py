#!/usr/bin/env python3
"""The fault soak (issue 26 §1): hpclaunch-train's auto-encoder under two `hpclaunch agent`s (2 emulated nodes x
2 workers, restarts allowed), hit by a seeded, logged fault driver at random moments, must end bit-identical to an
unfaulted run of the same seed and steps. bench/soak/README.md says what is checked and how; RESULTS.md holds the
figures.

    bench/soak/soak.py --hpclaunch BUILD/launcher/hpclaunch --train BUILD/trainer/hpclaunch-train \
        --work DIR --seed 1 --faults 12 --steps 600

The driver plays the scheduler of the local site: a job whose agents all ended before the last step (an agent
killed, a stop signal, exit codes of a failed round) is started again with the same arguments (a requeue), as
Slurm's --requeue would. Every fault is a line of DIR/faults.jsonl; the summary is DIR/summary.json, printed.
Exit 0 when every check held, 1 with one line per failed check.
"""
import argparse
import ctypes
import hashlib
import io
import json
import os
import random
import re
import select
import shutil
import signal
import socket
import statistics
import subprocess
import sys
import struct
import time
import zipfile

KINDS = ["worker_kill", "agent_kill", "store_agent_kill", "preempt_usr1", "preempt_term", "requeue",
         "kill_during_save", "disk_full"]


def free_port():
    with socket.socket() as s:
        s.bind(("127.0.0.1", 0))
        return s.getsockname()[1]


def children(pid):
    """Direct children of pid (from /proc)."""
    out = []
    for entry in os.listdir("/proc"):
        if not entry.isdigit():
            continue
        try:
            with open(f"/proc/{entry}/stat") as f:
                stat = f.read()
            ppid = int(stat.rsplit(")", 1)[1].split()[1])
        except (OSError, IndexError, ValueError):
            continue
        if ppid == pid:
            out.append(int(entry))
    return out


def env_of(pid):
    try:
        with open(f"/proc/{pid}/environ", "rb") as f:
            raw = f.read()
    except OSError:
        return {}
    out = {}
    for kv in raw.split(b"\0"):
        if b"=" in kv:
            k, v = kv.split(b"=", 1)
            out[k.decode(errors="replace")] = v.decode(errors="replace")
    return out


def kill(pid, sig):
    try:
        os.kill(pid, sig)
        return True
    except ProcessLookupError:
        return False


LIBC = ctypes.CDLL(None, use_errno=True)
IN_CREATE = 0x100


def wait_created(folder, prefix, seconds):
    """The name of the first file whose name starts with `prefix` created in `folder` within `seconds`, or None."""
    fd = LIBC.inotify_init1(os.O_CLOEXEC)
    if fd < 0 or LIBC.inotify_add_watch(fd, folder.encode(), IN_CREATE) < 0:
        raise OSError(ctypes.get_errno(), f"inotify on {folder}")
    try:
        deadline = time.time() + seconds
        while time.time() < deadline:
            ready, _, _ = select.select([fd], [], [], max(0.0, deadline - time.time()))
            if not ready:
                break
            buf = os.read(fd, 65536)
            at = 0
            while at + 16 <= len(buf):
                _, _, _, length = struct.unpack_from("iIII", buf, at)
                name = buf[at + 16:at + 16 + length].rstrip(b"\0").decode(errors="replace")
                at += 16 + length
                if name.startswith(prefix):
                    return name
        return None
    finally:
        os.close(fd)


def read_records(path):
    """The metrics file's complete records (a torn last line is not one)."""
    try:
        with open(path, "rb") as f:
            text = f.read().decode(errors="replace")
    except OSError:
        return []
    out = []
    for line in text.split("\n")[:-1]:
        try:
            out.append(json.loads(line))
        except ValueError:
            pass
    return out


class Soak:
    def __init__(self, a):
        self.a = a
        self.work = os.path.abspath(a.work)
        self.rng = random.Random(a.seed)
        self.log = []  # the faults
        self.attempts = 0
        self.peak = 0  # the highest step any record reached so far
        self.round = 0  # the highest restart round seen in this attempt
        self.restarts = 0

    # --- one job: two agents -------------------------------------------------------------------------------------
    def train_args(self, jobdir):
        return [self.a.train, "--model", "autoencoder", "--synthetic", "--synthetic-samples", "4096",
                "--global-batch-size", "64", "--optimizer", "adam", "--epochs", "1000", "--steps",
                str(self.a.steps), "--no-validation", "--threads", "1", "--seed", str(self.a.seed),
                "--checkpoint-every", str(self.a.checkpoint_every), "--checkpoint-dir", f"{jobdir}/ck",
                "--resume", "--metrics", f"{jobdir}/metrics.jsonl", "--log-every", "100000"]

    def start_job(self, jobdir, name, restarts, attempt):
        port = free_port()
        agents = []
        for node in (0, 1):
            env = dict(os.environ, HPCLAUNCH_LOCAL_JOB="1", HPCLAUNCH_JOB_ID=f"local-soak-{name}",
                       HPCLAUNCH_NODELIST="node[0-1]", HPCLAUNCH_NNODES="2", HPCLAUNCH_NODE_RANK=str(node),
                       HPCLAUNCH_NODENAME=f"node{node}", HPCLAUNCH_MASTER_ADDR_RULE="fixed",
                       HPCLAUNCH_MASTER_ADDR_FIXED="127.0.0.1", HPCLAUNCH_MASTER_PORT=str(port),
                       HPCLAUNCH_RDZV_SECRET="5eed5eed5eed5eed", HPCLAUNCH_TRAIN_TIMEOUT_S="60",
                       TMPDIR=f"{self.work}/tmp")
            out = open(f"{self.work}/{name}.{attempt}.agent{node}.log", "ab")
            cmd = [self.a.hpclaunch, "agent", "--grace", "3", "--nproc-per-node", "2", "--max-restarts",
                   str(restarts), "--"] + self.train_args(jobdir)
            agents.append(subprocess.Popen(cmd, env=env, stdout=out, stderr=subprocess.STDOUT))
            out.close()
        return agents

    def workers(self, agents):
        """(rank, pid) of the running workers; notes the agents' restart round (TORCHELASTIC_RESTART_COUNT)."""
        out = []
        for agent in agents:
            for pid in children(agent.pid):
                env = env_of(pid)
                if "RANK" in env:
                    out.append((int(env["RANK"]), pid))
                    self.round = max(self.round, int(env.get("TORCHELASTIC_RESTART_COUNT", "0")))
        return sorted(out)

    def progress(self, jobdir):
        recs = read_records(f"{jobdir}/metrics.jsonl")
        steps = [r["step"] for r in recs if r.get("type") == "step"]
        if steps:
            self.peak = max(self.peak, max(steps))
        return recs

    def finished(self, jobdir):
        recs = read_records(f"{jobdir}/metrics.jsonl")
        return any(r.get("type") == "run_end" and r.get("status") == "done" and r.get("step") == self.a.steps
                   for r in recs)

    # --- the faults ----------------------------------------------------------------------------------------------
    def inject(self, kind, agents, jobdir):
        """Carries out one fault; returns what it did (for the log)."""
        what = {}
        ws = self.workers(agents)
        if kind == "worker_kill":
            if not ws:
                return {"missed": "no worker running"}
            rank, pid = self.rng.choice(ws)
            kill(pid, signal.SIGKILL)
            what = {"rank": rank}
        elif kind == "agent_kill":
            kill(agents[1].pid, signal.SIGKILL)
        elif kind == "store_agent_kill":
            kill(agents[0].pid, signal.SIGKILL)
        elif kind == "preempt_usr1":
            for agent in agents:
                kill(agent.pid, signal.SIGUSR1)
        elif kind == "preempt_term":
            for agent in agents:
                kill(agent.pid, signal.SIGTERM)
        elif kind == "requeue":
            # scontrol requeue: SIGTERM to the job's processes, SIGKILL after KillWait (here 2 s).
            for agent in agents:
                kill(agent.pid, signal.SIGTERM)
            deadline = time.time() + 2
            while time.time() < deadline and any(a.poll() is None for a in agents):
                time.sleep(0.02)
            for agent in agents:
                kill(agent.pid, signal.SIGKILL)
        elif kind == "kill_during_save":
            # Rank 0 killed as soon as its temporary checkpoint file appears (atomic_file.cc writes
            # .latest.pt.tmp.PID, then renames it): inotify wakes the driver on the file's creation.
            rank0 = [pid for rank, pid in ws if rank == 0]
            if not rank0:
                return {"missed": "no rank 0 running"}
            name = wait_created(f"{jobdir}/ck", ".latest.pt.tmp.", 10)
            if name is None:
                return {"missed": "no checkpoint write within 10 s"}
            kill(rank0[0], signal.SIGKILL)
            return {"temporary": name}
        elif kind == "disk_full":
            # The job directory's file system full for a moment: a file takes every free block for 1-3 s.
            filler = f"{jobdir}/filler"
            hold = self.rng.uniform(1, 3)
            with open(filler, "wb", buffering=0) as f:  # unbuffered: nothing left to write at close
                try:
                    while f.write(b"\0" * 65536):
                        pass
                except OSError:  # ENOSPC: the file system is full
                    pass
            time.sleep(hold)
            os.unlink(filler)
            what = {"held_s": round(hold, 2)}
        return what

    # --- a whole run ---------------------------------------------------------------------------------------------
    def run(self, jobdir, name, faults, restarts, kinds):
        """Runs the job to its last step, requeueing as needed, with `faults` faults; returns wall seconds."""
        os.makedirs(jobdir, exist_ok=True)
        start = time.time()
        pending = None  # (fault record, peak at the fault)
        next_at = None
        attempts = 0
        while True:
            attempts += 1
            if attempts > 3 * faults + 5:
                raise SystemExit(f"soak: {name}: more than {3 * faults + 5} requeues; see {self.work}")
            agents = self.start_job(jobdir, name, restarts, attempts)
            self.round = 0
            tick = 0
            while any(a.poll() is None for a in agents):
                time.sleep(0.02)
                tick += 1
                if tick % 5 == 0:
                    self.workers(agents)
                if time.time() - start > self.a.timeout:
                    for a in agents:
                        kill(a.pid, signal.SIGKILL)
                    raise SystemExit(f"soak: {name}: not done after {self.a.timeout} s; see {self.work}")
                self.progress(jobdir)
                if pending and self.peak >= pending[1] + 2 and time.time() > pending[0]["time"] + 0.5:
                    # trained past the fault: arm the next one
                    pending = None
                if pending is None and len(self.log) < faults and self.peak < self.a.steps - 3 * self.a.checkpoint_every:
                    if next_at is None:
                        next_at = time.time() + self.rng.uniform(self.a.min_gap, self.a.max_gap)
                    elif time.time() >= next_at and self.workers(agents):
                        kind = self.rng.choice(kinds)
                        record = {"n": len(self.log) + 1, "kind": kind, "time": time.time(), "step": self.peak,
                                  "attempt": attempts}
                        record.update(self.inject(kind, agents, jobdir))
                        self.log.append(record)
                        with open(f"{self.work}/faults.jsonl", "a") as f:
                            f.write(json.dumps(record) + "\n")
                        pending = (record, self.peak)
                        next_at = None
            codes = [a.returncode for a in agents]
            # The restarts of this attempt: the highest round a worker was seen in, or what an agent that ended with
            # an error counted ("... (after N of M restarts)").
            for node in (0, 1):
                with open(f"{self.work}/{name}.{attempts}.agent{node}.log", errors="replace") as f:
                    for n in re.findall(r"\(after (\d+) of \d+ restarts\)", f.read()):
                        self.round = max(self.round, int(n))
            self.restarts += self.round
            self.progress(jobdir)
            if self.finished(jobdir) and codes == [0, 0]:
                self.attempts = attempts
                return time.time() - start
            # A requeue: the scheduler starts the job again (its previous processes must be gone first).
            with open(f"{self.work}/requeues.jsonl", "a") as f:
                f.write(json.dumps({"time": time.time(), "agent_exit_codes": codes, "peak": self.peak}) + "\n")
            self.wait_no_processes(jobdir, 10)

    def wait_no_processes(self, jobdir, seconds):
        deadline = time.time() + seconds
        while time.time() < deadline:
            if not self.leftovers(jobdir):
                return True
            time.sleep(0.05)
        return False

    def leftovers(self, jobdir):
        out = []
        for entry in os.listdir("/proc"):
            if not entry.isdigit() or int(entry) == os.getpid():
                continue
            try:
                with open(f"/proc/{entry}/cmdline", "rb") as f:
                    cmd = f.read().replace(b"\0", b" ").decode(errors="replace")
            except OSError:
                continue
            if jobdir + "/" in cmd:
                out.append(f"{entry}: {cmd[:120]}")
        return out


def same_state(a, b):
    """Whether two checkpoints hold the same state, bit for bit: every entry of the two zip archives equal, except
    LibTorch's optimizer archive (a zip inside), whose tensors are compared as a set: LibTorch writes Adam's
    per-parameter state in the order of a map keyed by tensor addresses, which differ between processes."""
    za, zb = zipfile.ZipFile(a), zipfile.ZipFile(b)
    if za.namelist() != zb.namelist():
        return False, "other entries"
    for name in za.namelist():
        x, y = za.read(name), zb.read(name)
        if x == y:
            continue
        if not (x.startswith(b"PK") and y.startswith(b"PK")):
            return False, f"{name} differs"
        ia, ib = zipfile.ZipFile(io.BytesIO(x)), zipfile.ZipFile(io.BytesIO(y))
        tensors = [sorted(hashlib.sha256(z.read(n)).hexdigest() for n in z.namelist() if "/data/" in n)
                   for z in (ia, ib)]
        if tensors[0] != tensors[1]:
            return False, f"the tensors in {name} (the optimizer's archive) differ"
    return True, "same"


def lost_time(fault, until, records):
    """Seconds a fault cost (see main); records: the final metrics file's."""
    for i, r in enumerate(records):
        if r.get("type") != "run_start" or not fault["time"] < r["time"] < until:
            continue
        first = next((x for x in records[i + 1:] if x.get("type") == "step"), None)
        if first is None:
            return 0.0
        dead = first["time"] - first["step_time_s"] - fault["time"]
        redo = sum(x["step_time_s"] for x in records[i + 1:]
                   if x.get("type") == "step" and r["step"] < x["step"] <= fault["step"])
        return max(0.0, dead) + redo
    return 0.0


def check_metrics(path, steps):
    """Problems of the metrics file: not JSON lines, a step missing or twice."""
    problems = []
    seen = {}
    with open(path, "rb") as f:
        lines = f.read().decode(errors="replace").split("\n")
    if lines[-1] != "":
        problems.append(f"{path}: the last line is not terminated")
    for i, line in enumerate(lines[:-1], 1):
        try:
            r = json.loads(line)
        except ValueError:
            problems.append(f"{path}:{i}: not JSON: {line[:80]}")
            continue
        if r.get("type") == "step":
            seen[r["step"]] = seen.get(r["step"], 0) + 1
    twice = sorted(s for s, n in seen.items() if n > 1)
    missing = sorted(set(range(1, steps + 1)) - set(seen))
    extra = sorted(s for s in seen if s < 1 or s > steps)
    if twice:
        problems.append(f"{path}: steps more than once: {twice[:10]}")
    if missing:
        problems.append(f"{path}: steps missing: {missing[:10]}")
    if extra:
        problems.append(f"{path}: steps outside 1..{steps}: {extra[:10]}")
    return problems, sum(1 for line in lines[:-1] if '"type":"run_start"' in line)


def main():
    p = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    p.add_argument("--hpclaunch", required=True)
    p.add_argument("--train", required=True)
    p.add_argument("--work", required=True, help="a new directory for the runs")
    p.add_argument("--seed", type=int, default=1)
    p.add_argument("--faults", type=int, default=12)
    p.add_argument("--steps", type=int, default=600)
    p.add_argument("--checkpoint-every", type=int, default=5)
    p.add_argument("--min-gap", type=float, default=0.1, help="seconds after recovery before the next fault, least")
    p.add_argument("--max-gap", type=float, default=1.0)
    p.add_argument("--kinds", default=",".join(KINDS), help="comma-separated fault kinds")
    p.add_argument("--tmpfs-mb", type=int, default=16, help="the faulted job directory's tmpfs (0: none)")
    p.add_argument("--timeout", type=float, default=900)
    a = p.parse_args()
    kinds = [k for k in a.kinds.split(",") if k]
    for k in kinds:
        if k not in KINDS:
            raise SystemExit(f"soak: --kinds: no fault '{k}'; one of {', '.join(KINDS)}")
    a.hpclaunch, a.train = os.path.abspath(a.hpclaunch), os.path.abspath(a.train)
    work = os.path.abspath(a.work)
    os.makedirs(f"{work}/tmp", exist_ok=True)
    soak = Soak(a)

    ref_dir, job_dir = f"{work}/reference", f"{work}/job"
    ref_s = soak.run(ref_dir, "reference", 0, 0, kinds)
    ref_peak = soak.peak
    os.makedirs(job_dir)
    mounted = False
    if "disk_full" in kinds and a.tmpfs_mb > 0:
        mounted = subprocess.run(["mount", "-t", "tmpfs", "-o", f"size={a.tmpfs_mb}m", "tmpfs", job_dir],
                                 stderr=subprocess.DEVNULL).returncode == 0
        if not mounted:
            kinds = [k for k in kinds if k != "disk_full"]
            print("soak: cannot mount a tmpfs here: no disk_full faults", file=sys.stderr)
    try:
        soak.peak = 0
        soak_s = soak.run(job_dir, "job", a.faults, 1000, kinds)
        problems = []
        if not soak.wait_no_processes(job_dir, 15):
            problems.append("processes left: " + "; ".join(soak.leftovers(job_dir)))
        ref_ck, job_ck = f"{ref_dir}/ck/latest.pt", f"{job_dir}/ck/latest.pt"
        byte_identical = open(ref_ck, "rb").read() == open(job_ck, "rb").read()
        same, why = same_state(ref_ck, job_ck)
        cmp = subprocess.run([a.train, "compare", ref_ck, job_ck, "--tolerance", "0"], capture_output=True, text=True)
        # The state in use: each continued alone for 5 more steps must still end on the same bits (Adam's moments
        # paired with the same parameters, the same step counts and schedule).
        after = []
        for tag, ck in (("reference", ref_ck), ("job", job_ck)):
            d = f"{work}/continue-{tag}"
            args = [x for x in soak.train_args(d) if x not in ("--resume",)]
            args[args.index("--steps") + 1] = str(a.steps + 5)
            args = [x for i, x in enumerate(args) if not (x == "--metrics" or (i and args[i - 1] == "--metrics"))]
            env = {k: v for k, v in os.environ.items() if k not in ("RANK", "WORLD_SIZE", "LOCAL_RANK", "MASTER_ADDR",
                                                                   "MASTER_PORT")}
            subprocess.run(args + ["--resume-from", ck], env=env, check=True, stdout=subprocess.DEVNULL)
            after.append(f"{d}/ck/latest.pt")
        cont = subprocess.run([a.train, "compare", after[0], after[1], "--tolerance", "0"], capture_output=True,
                              text=True)
        identical = same and cmp.stdout.strip().endswith(": same") and cont.stdout.strip().endswith(": same")
        if not identical:
            problems.append(f"latest.pt differs from the unfaulted run's: {why}; {cmp.stdout.strip()}; "
                            f"5 steps further: {cont.stdout.strip()}")
        m_problems, _ = check_metrics(f"{job_dir}/metrics.jsonl", a.steps)
        problems += m_problems
        shutil.copy(f"{job_dir}/metrics.jsonl", f"{work}/job-metrics.jsonl")
        shutil.copy(f"{job_dir}/ck/latest.pt", f"{work}/job-latest.pt")
    finally:
        if mounted:
            subprocess.run(["umount", "-l", job_dir])

    # Wall time lost per fault, from the metrics file (its records carry their time and each step's duration, so
    # the figure does not depend on how busy the machine was in the reference run): the time from the fault to the
    # first step of the run that started after it, plus the duration of the steps that run trained again (from
    # its checkpoint to where training was at the fault). A fault after which no run started before the next
    # fault cost nothing measurable (missed, or its effect merged into the next fault's).
    records = read_records(f"{work}/job-metrics.jsonl")
    lost = [lost_time(f, soak.log[i + 1]["time"] if i + 1 < len(soak.log) else float("inf"), records)
            for i, f in enumerate(soak.log)]
    by_kind = {}
    for f in soak.log:
        by_kind[f["kind"]] = by_kind.get(f["kind"], 0) + 1
    requeues = soak.attempts - 1
    summary = {
        "seed": a.seed, "steps": a.steps, "checkpoint_every": a.checkpoint_every, "faults": len(soak.log),
        "faults_by_kind": by_kind, "missed": sum(1 for f in soak.log if "missed" in f),
        "requeues": requeues, "restarts": soak.restarts,
        "reference_s": round(ref_s, 1), "soak_s": round(soak_s, 1),
        "lost_per_fault_s": {"median": round(statistics.median(lost), 2) if lost else 0,
                             "max": round(max(lost), 2) if lost else 0},
        "lost_by_kind_s": {k: {"median": round(statistics.median(ls), 2), "max": round(max(ls), 2)}
                           for k in by_kind for ls in [[l for f, l in zip(soak.log, lost) if f["kind"] == k]]},
        "lost_total_s": round(sum(lost), 1),
        "bit_identical": identical, "byte_identical_file": byte_identical, "compare": cmp.stdout.strip(),
        "compare_5_steps_further": cont.stdout.strip(), "problems": problems,
        "reference_peak": ref_peak,
    }
    with open(f"{work}/summary.json", "w") as f:
        json.dump(summary, f, indent=1)
    print(json.dumps(summary, indent=1))
    for problem in problems:
        print("soak: " + problem, file=sys.stderr)
    return 1 if problems or not identical else 0


if __name__ == "__main__":
    sys.exit(main())
