#!/usr/bin/env python3
"""The fault soak: hpclaunch-train's auto-encoder under two `hpclaunch agent`s (2 emulated nodes x 2 workers,
restarts allowed), hit by a seeded, logged fault driver at random moments, must end bit-identical to an unfaulted
run of the same seed and steps. bench/soak/README.md says what is checked and how; RESULTS.md holds the figures.

    bench/soak/soak.py --hpclaunch BUILD/launcher/hpclaunch --train BUILD/trainer/hpclaunch-train \
        --work DIR --seed 1 --faults 12 --steps 600

The driver plays the scheduler of the local site: a job whose agents all ended before the last step (an agent
killed, a stop signal, exit codes of a failed round) is started again with the same arguments (a requeue), as
Slurm's --requeue would. With --slurm CLUSTER_DIR the faulted run is instead one `hpclaunch submit --launcher agent
--requeue` job on the real test cluster, and Slurm and the rendered script requeue it (SlurmSoak).
Every fault is a line of DIR/faults.jsonl; the summary is DIR/summary.json, printed.
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
# Asked for by name (--kinds) with --hang-timeout: a worker SIGSTOPped, a hang that never exits; its agent must
# find it, record its stacks (gdb for hpclaunch-train) and restart the group.
HANG_KINDS = ["hang_stop"]
# On the Slurm test cluster (--slurm): the faults a 2-node `submit --launcher agent --requeue` job survives there.
# agent_kill and store_agent_kill may be asked for (--kinds); README.md says what they do instead.
SLURM_KINDS = ["worker_kill", "kill_during_save", "preempt_usr1", "requeue"]
TERMINAL = {"COMPLETED", "FAILED", "CANCELLED", "TIMEOUT", "NODE_FAIL", "OUT_OF_MEMORY", "BOOT_FAIL", "DEADLINE",
            "PREEMPTED"}


def free_port():
    with socket.socket() as s:
        s.bind(("127.0.0.1", 0))
        return s.getsockname()[1]


def pids():
    return [int(entry) for entry in os.listdir("/proc") if entry.isdigit()]


def parent(pid):
    """pid's parent (from /proc), or None if it is gone."""
    try:
        with open(f"/proc/{pid}/stat") as f:
            return int(f.read().rsplit(")", 1)[1].split()[1])
    except (OSError, IndexError, ValueError):
        return None


def comm(pid):
    try:
        with open(f"/proc/{pid}/comm") as f:
            return f.read().strip()
    except OSError:
        return None


def children(pid):
    """Direct children of pid."""
    return [p for p in pids() if parent(p) == pid]


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
                   str(restarts), "--hang-timeout", str(self.a.hang_timeout), "--hang-startup-timeout", "120",
                   "--"] + self.train_args(jobdir)
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
        if kind in ("worker_kill", "hang_stop"):  # a worker killed, or stopped: a hang that never exits
            if not ws:
                return {"missed": "no worker running"}
            rank, pid = self.rng.choice(ws)
            kill(pid, signal.SIGKILL if kind == "worker_kill" else signal.SIGSTOP)
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
            if not os.path.isdir(f"{jobdir}/ck"):
                return {"missed": "no checkpoint folder yet"}
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

    def settled(self, fault, jobdir):
        return True

    def maybe_fault(self, faults, kinds, ready, agents, jobdir, **where):
        """The driver's step: once training got past the last fault, waits a random gap, then injects the next
        (when ready() is true: workers are running). `where` goes into the fault's record. The waits are counted in
        training steps, not seconds, so that the same faults fit into the same steps on a fast machine and a loaded
        one (on a quiet machine the old 0.5 s + 0.1-1 s waits used up the run's steps after 8 of 14 faults)."""
        if self.pending and self.peak >= self.pending[1] + self.a.settle_steps and \
                self.settled(self.pending[0], jobdir):
            self.pending = None  # trained past the fault: arm the next one
        if self.pending is not None or len(self.log) >= faults or \
                self.peak >= self.a.steps - 3 * self.a.checkpoint_every:
            return
        if self.next_at is None:
            self.next_at = self.peak + self.rng.randint(self.a.min_gap, self.a.max_gap)
        elif self.peak >= self.next_at and ready():
            kind = self.rng.choice(kinds)
            record = {"n": len(self.log) + 1, "kind": kind, "time": time.time(), "step": self.peak, **where}
            record.update(self.inject(kind, agents, jobdir))
            self.log.append(record)
            with open(f"{self.work}/faults.jsonl", "a") as f:
                f.write(json.dumps(record) + "\n")
            self.pending = (record, self.peak)  # (fault record, peak at the fault)
            self.next_at = None

    # --- a whole run ---------------------------------------------------------------------------------------------
    def run(self, jobdir, name, faults, restarts, kinds):
        """Runs the job to its last step, requeueing as needed, with `faults` faults; returns wall seconds."""
        os.makedirs(jobdir, exist_ok=True)
        start = time.time()
        self.pending = self.next_at = None
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
                self.maybe_fault(faults, kinds, lambda: self.workers(agents), agents, jobdir, attempt=attempts)
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


class SlurmSoak(Soak):
    """The faulted run as one Slurm job on the test cluster (scripts/test-cluster.sh start DIR): `hpclaunch submit
    --launcher agent --requeue`, its agents given restarts through torchrun's PET_MAX_RESTARTS. The faults are
    Slurm's own (scancel --signal, scontrol requeue) or a SIGKILL of a process of the job; Slurm and the rendered
    script do the requeueing."""

    def __init__(self, a, cluster_env):
        super().__init__(a)
        self.env = cluster_env
        self.job = None
        self.rounds = {}  # Slurm run (SLURM_RESTART_COUNT) -> highest TORCHELASTIC_RESTART_COUNT seen in it
        self.outcomes = []  # what a fault that the job cannot survive here did
        self.load = []  # the machine's 1-minute load average, every 5 s

    def slurm(self, *args, check=True):
        r = subprocess.run(list(args), env=self.env, capture_output=True, text=True)
        if check and r.returncode != 0:
            raise SystemExit(f"soak: {' '.join(args)}: {r.stderr.strip()}")
        return r.stdout

    def job_info(self):
        out = self.slurm("scontrol", "show", "job", self.job, check=False)
        return dict(re.findall(r"(\w+)=(\S*)", out))

    def submit(self, jobdir):
        # The trainer's arguments name the job directory, so every process of the job is found by it (leftovers).
        cmd = [self.a.hpclaunch, "submit", "--site", "test-shaped", "--site-file",
               f"{SOURCE}/tests/integration/sites/test-shaped.yaml", "--job-dir", jobdir, "--nodes", "2",
               "--gpus-per-node", "2", "--time", "60", "--launcher", "agent", "--requeue", "--max-requeues",
               str(3 * self.a.faults + 5), "--env", "PET_MAX_RESTARTS=1000", "--env", "TORCH_ELASTIC_SHUTDOWN_TIMEOUT=3",
               "--env", "HPCLAUNCH_TRAIN_TIMEOUT_S=60", "--"] + self.train_args(jobdir)
        out = self.slurm(*cmd)
        ids = re.findall(r"\b(\d+)\b", out)
        if not ids:
            raise SystemExit(f"soak: submit printed no job id: {out}")
        self.job = ids[-1]

    def procs(self, name):
        """(pid, env) of this job's processes named `name`."""
        return [(pid, env) for pid in pids() if comm(pid) == name
                for env in [env_of(pid)] if env.get("SLURM_JOB_ID") == self.job]

    def workers(self, agents=None):
        out = []
        for pid, env in self.procs("hpclaunch-train"):
            if "RANK" in env:
                out.append((int(env["RANK"]), pid))
                run = int(env.get("SLURM_RESTART_COUNT", "0") or 0)
                self.rounds[run] = max(self.rounds.get(run, 0), int(env.get("TORCHELASTIC_RESTART_COUNT", "0")))
        return sorted(out)

    def agent_on(self, node_id):
        """The agent of this job on the node with SLURM_NODEID node_id (slurmstepd's child, not its orphan guard)."""
        for pid, env in self.procs("hpclaunch"):
            if env.get("SLURM_NODEID") == str(node_id) and "RANK" not in env and comm(parent(pid)) == "slurmstepd":
                return pid
        return None

    def settled(self, fault, jobdir):
        """Whether the job has recovered from `fault`: a run (a restart or a requeue) started after it. A warning
        lets the workers train a step or two more before they save, so the peak alone would arm the next fault
        while the job is still stopping, and one fault's cost would hide in the next's."""
        return "missed" in fault or any(r.get("type") == "run_start" and r["time"] > fault["time"]
                                        for r in read_records(f"{jobdir}/metrics.jsonl"))

    def inject(self, kind, agents, jobdir):
        if kind in ("worker_kill", "kill_during_save"):
            return super().inject(kind, agents, jobdir)
        if kind == "preempt_usr1":
            # Slurm's warning before the time limit (or a preemption's), by hand: to the batch script, which
            # passes it on to srun, hence the agents and every worker.
            self.slurm("scancel", "--signal=USR1", "--batch", self.job)
        elif kind == "requeue":
            # Slurm ends the run (SIGTERM to every step, SIGKILL after KillWait) and queues the job again.
            self.slurm("scontrol", "requeue", self.job)
        elif kind in ("agent_kill", "store_agent_kill"):
            pid = self.agent_on(1 if kind == "agent_kill" else 0)
            if pid is None:
                return {"missed": "no agent found"}
            kill(pid, signal.SIGKILL)
        return {}

    def run(self, jobdir, name, faults, restarts, kinds):
        os.makedirs(jobdir, exist_ok=True)
        start = time.time()
        self.submit(jobdir)
        self.pending = self.next_at = None
        ticks = 0
        while True:
            info = self.job_info()
            state = info.get("JobState", "")
            if state in TERMINAL:
                break
            if time.time() - start > self.a.timeout:
                self.slurm("scancel", self.job, check=False)
                raise SystemExit(f"soak: job {self.job} not done after {self.a.timeout} s; see {self.work}")
            if state == "PENDING" and info.get("ExcNodeList", "(null)") != "(null)":
                # A lost agent's node is left out of the next run (t0295); with one node left, a 2-node job waits.
                self.outcomes.append({"time": time.time(), "excluded": info["ExcNodeList"],
                                      "restarts": info.get("Restarts")})
                self.slurm("scancel", self.job, check=False)
                raise SystemExit(f"soak: job {self.job} requeued without {info['ExcNodeList']}: it cannot run on "
                                 f"the 2-node cluster any more; see {self.work}")
            time.sleep(0.1)
            if not self.load or time.time() >= self.load[-1][0] + 5:
                self.load.append((time.time(), os.getloadavg()[0]))
            self.progress(jobdir)
            ticks += 1
            if state == "RUNNING" and ticks % 5 == 0:
                self.workers()  # notes the restart round
            self.maybe_fault(faults, kinds, lambda: state == "RUNNING" and self.peak > 0 and self.workers(), None, jobdir,
                             run=int(info.get("Restarts", "0") or 0))
        self.state = state
        if state != "COMPLETED":
            raise SystemExit(f"soak: job {self.job} ended {state}, not COMPLETED (the last fault: "
                             f"{self.log[-1]['kind'] if self.log else 'none'}); see {jobdir}/slurm-{self.job}.out")
        self.attempts = int(info.get("Restarts", "0") or 0) + 1
        self.restarts = sum(self.rounds.values())
        self.progress(jobdir)
        return time.time() - start


def cluster_env(folder):
    """The environment that points sbatch, scontrol, ... at the test cluster in `folder` (its env.sh)."""
    env = dict(os.environ)
    try:
        with open(f"{folder}/env.sh") as f:
            for name, value in re.findall(r"^export (\w+)=(.*)$", f.read(), re.M):
                env[name] = value.replace("$PATH", env.get("PATH", "")).strip('"')
    except OSError:
        raise SystemExit(f"soak: --slurm: no test cluster in {folder} (no env.sh); run scripts/test-cluster.sh "
                         f"start {folder}")
    return env


SOURCE = os.path.dirname(os.path.dirname(os.path.dirname(os.path.abspath(__file__))))


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
    p.add_argument("--settle-steps", type=int, default=3,
                   help="steps training must get past a fault before the next one is armed")
    p.add_argument("--min-gap", type=int, default=2, help="steps after that before the next fault, least")
    p.add_argument("--max-gap", type=int, default=10, help="and most")
    p.add_argument("--kinds", help="comma-separated fault kinds (default: all; with --slurm: " + ",".join(SLURM_KINDS) + ")")
    p.add_argument("--tmpfs-mb", type=int, default=16, help="the faulted job directory's tmpfs (0: none)")
    p.add_argument("--timeout", type=float, default=900)
    p.add_argument("--hang-timeout", type=float, default=0,
                   help="the agents' --hang-timeout (needed for the hang kinds: " + ",".join(HANG_KINDS) + ")")
    p.add_argument("--slurm", metavar="CLUSTER_DIR",
                   help="the faulted run as a `submit --launcher agent --requeue` job on the test cluster started "
                        "with scripts/test-cluster.sh start CLUSTER_DIR (the reference runs as without it)")
    a = p.parse_args()
    known = (KINDS if not a.slurm else SLURM_KINDS + ["agent_kill", "store_agent_kill"]) + HANG_KINDS
    kinds = [k for k in (a.kinds or ",".join(SLURM_KINDS if a.slurm else KINDS)).split(",") if k]
    for k in kinds:
        if k not in known:
            raise SystemExit(f"soak: --kinds: no fault '{k}'{' on Slurm' if a.slurm else ''}; one of {', '.join(known)}")
        if k in HANG_KINDS and a.hang_timeout <= 0:
            raise SystemExit(f"soak: --kinds {k}: needs --hang-timeout S, or the hang is never found")
    # The disk_full tmpfs is mounted in a mount namespace of this soak's own, so that it ends with the soak's
    # processes even when the soak is killed (a CTest timeout), where `finally` never runs. On Slurm the jobs run
    # outside it (slurmd's), so there the tmpfs stays in the machine's namespace.
    if ("disk_full" in kinds and a.tmpfs_mb > 0 and not a.slurm and os.geteuid() == 0
            and not os.environ.get("HPCLAUNCH_SOAK_MOUNTS") and shutil.which("unshare")
            and subprocess.run(["unshare", "--mount", "--propagation", "private", "true"],
                               stderr=subprocess.DEVNULL).returncode == 0):  # not where / is no mount (a chroot)
        os.environ["HPCLAUNCH_SOAK_MOUNTS"] = "private"
        os.execvp("unshare", ["unshare", "--mount", "--propagation", "private", sys.executable] + sys.argv)
    a.hpclaunch, a.train = os.path.abspath(a.hpclaunch), os.path.abspath(a.train)
    work = os.path.abspath(a.work)
    os.makedirs(f"{work}/tmp", exist_ok=True)
    soak = Soak(a)

    ref_dir, job_dir = f"{work}/reference", f"{work}/job"
    ref_s = soak.run(ref_dir, "reference", 0, 0, kinds)
    ref_peak = soak.peak
    if a.slurm:
        env = cluster_env(os.path.abspath(a.slurm))
        # The job index of this soak alone (the user's own is not touched): it must end with the job's one row.
        env["XDG_STATE_HOME"] = f"{work}/xdg-state"
        soak = SlurmSoak(a, env)
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
        if a.slurm:
            rows = [line for line in soak.slurm(a.hpclaunch, "jobs", "--json", "--no-state").splitlines() if line]
            if len(rows) != 1:
                problems.append(f"the job index has {len(rows)} rows, not 1")
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
    if a.slurm:
        loads = [l for _, l in soak.load] or [0.0]
        summary.update({"slurm_job": soak.job, "slurm_state": soak.state,
                        "load_average_1min": {"median": round(statistics.median(loads), 1), "max": max(loads)}})
    with open(f"{work}/summary.json", "w") as f:
        json.dump(summary, f, indent=1)
    print(json.dumps(summary, indent=1))
    for problem in problems:
        print("soak: " + problem, file=sys.stderr)
    return 1 if problems or not identical else 0


if __name__ == "__main__":
    sys.exit(main())
