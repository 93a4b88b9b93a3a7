"""Executor: a Python function run on every rank of a job, shaped like submitit's so that a submitit script moves
over by changing its import and the executor's constructor: ex.submit(fn, *args) -> job, job.result() is rank 0's
value; ex.map_array(fn, *iterables) and `with ex.batch():` are one array job, a task per call; as_completed,
JobEnvironment, Checkpointable and DelayedSubmission as submitit has them."""
import os
import pickle
import re
import shutil
import signal
import sys
import tempfile
import time as _time
from contextlib import contextmanager

from . import _cli
from ._cli import HpclaunchError
from ._job import Job

__all__ = ["Executor", "ExecutorJob", "RemoteError", "JobFailedError", "JobEnvironment", "Checkpointable",
           "DelayedSubmission", "JobPaths", "as_completed"]

# How many of a crashed rank's last lines its error shows (the worker keeps more: err.output_tail).
_TAIL_SHOWN = 10


class JobFailedError(HpclaunchError):
    """The job ended without every rank returning a value: a rank crashed (`.rank`, `.host`, `.returncode` or
    `.signal`, `.output_tail`), called sys.exit, or the job failed, was cancelled or timed out."""


class RemoteError(Exception):
    """An exception of a rank that could not be brought back as itself (not picklable)."""


class _RemoteTraceback(Exception):
    def __init__(self, text):
        super().__init__(text)
        self.text = text

    def __str__(self):
        return self.text


def _cloudpickle():
    try:
        import cloudpickle
    except ImportError:
        raise ImportError("the Executor pickles functions with cloudpickle: apt install python3-cloudpickle, "
                          "or pip install cloudpickle") from None
    return cloudpickle


def _write_private(path, data):
    fd = os.open(path, os.O_WRONLY | os.O_CREAT | os.O_EXCL, 0o600)
    with os.fdopen(fd, "wb") as f:
        f.write(data)


def _package_parent():
    return os.path.dirname(os.path.dirname(os.path.abspath(__file__)))


def _warnings_only(line):
    # submit's own lines ("submitted job ...") are what the ExecutorJob says; its warnings and notes are news.
    if line.startswith(("hpclaunch: warning:", "hpclaunch: note:")):
        sys.stderr.write(line)


def _signal_name(number):
    try:
        return signal.Signals(number).name
    except ValueError:
        return f"signal {number}"


class DelayedSubmission:
    """A call to make later: what Checkpointable.checkpoint returns (submitit's)."""

    def __init__(self, function, *args, **kwargs):
        self.function = function
        self.args = args
        self.kwargs = kwargs

    def result(self):
        return self.function(*self.args, **self.kwargs)


class Checkpointable:
    """A callable whose job is requeued when preempted or near its time limit (submitit's): on the warning signal
    rank 0 calls checkpoint(*args, **kwargs), and the requeued job calls what it returns (by default this object
    again with the same arguments; save your state in its attributes, or return a DelayedSubmission of your own).
    The Executor asks the site for --requeue (Slurm, local) for it."""

    def __call__(self, *args, **kwargs):
        raise NotImplementedError

    def checkpoint(self, *args, **kwargs):
        return DelayedSubmission(self, *args, **kwargs)


class JobEnvironment:
    """Where the calling function runs, inside an Executor job (submitit's JobEnvironment): global_rank,
    local_rank, num_tasks, node, num_nodes, hostname, job_id, raw_job_id, array_job_id, array_task_id. Read from
    torch's variables and the HPCLAUNCH_* ones the launcher exports into every rank, the same on every scheduler."""

    def __init__(self):
        if "RANK" not in os.environ:
            raise RuntimeError("JobEnvironment() is for the function an hpclaunch job runs (RANK is not set here)")
        self._env = dict(os.environ)

    def _int(self, *names, default):
        for name in names:
            if name in self._env:
                return int(self._env[name])
        return default

    @property
    def global_rank(self):
        return self._int("RANK", default=0)

    @property
    def local_rank(self):
        return self._int("HPCLAUNCH_NODE_LOCAL_RANK", "LOCAL_RANK", default=0)

    @property
    def num_tasks(self):
        return self._int("WORLD_SIZE", default=1)

    @property
    def node(self):
        return self._int("GROUP_RANK", "HPCLAUNCH_NODE_RANK", default=0)

    @property
    def num_nodes(self):
        return self._int("GROUP_WORLD_SIZE", "HPCLAUNCH_NNODES", default=1)

    @property
    def hostname(self):
        import socket

        return self._env.get("HPCLAUNCH_NODENAME") or socket.gethostname()

    @property
    def array_task_id(self):
        task = self._env.get("HPCLAUNCH_ARRAY_TASK_ID")
        return int(task) if task is not None else None

    @property
    def raw_job_id(self):
        """The scheduler's id of this job (of this task, for a task of an array on Slurm and PBS)."""
        return self._env.get("HPCLAUNCH_JOB_ID", "")

    @property
    def array_job_id(self):
        return self._env.get("HPCLAUNCH_ARRAY_JOB_ID")

    @property
    def job_id(self):
        """As `ExecutorJob.job_id` names it: ID, or ARRAY_I for task I of an array (PBS's own: 77[2].server)."""
        array, task = self.array_job_id, self.array_task_id
        return f"{array}_{task}" if array and task is not None and "[" not in array else self.raw_job_id

    def __repr__(self):
        return (f"JobEnvironment(job_id={self.job_id!r}, hostname={self.hostname!r}, global_rank={self.global_rank}, "
                f"local_rank={self.local_rank}, node={self.node}, num_nodes={self.num_nodes}, "
                f"num_tasks={self.num_tasks})")


class JobPaths:
    """Where an Executor job's files are (submitit's job.paths): folder (the call's private directory),
    submitted_pickle, result_pickle (rank 0's), stdout and stderr (rank 0's), submission_file (job.sh), job_dir."""

    def __init__(self, call_dir, job_dir, out_dir, rank=0):
        self.folder = call_dir
        self.job_dir = job_dir
        self.submission_file = os.path.join(job_dir, "job.sh") if job_dir else None
        self.submitted_pickle = os.path.join(call_dir, "call.pkl")
        self.result_pickle = os.path.join(out_dir, f"rank-{rank}.pkl")
        self.stdout = os.path.join(out_dir, f"rank-{rank}.out")
        self.stderr = os.path.join(out_dir, f"rank-{rank}.err")

    def __repr__(self):
        return f"JobPaths(folder={self.folder!r})"


class ExecutorJob(Job):
    """A Job whose command is a Python call: result() is rank 0's return value, results() every rank's."""

    def __init__(self, record, call_dir, task=None, world_size=None):
        self._submitted = None
        if record is not None:
            super().__init__(None, _record=record)
        self.call_dir = call_dir
        self.task = task
        self._world = world_size

    def _ready(self):
        if self.call_dir is None:
            raise HpclaunchError("hpclaunch: error: this job is not submitted yet: it is submitted when its "
                                 "`with executor.batch():` block ends; fix: use it after the block", 2)

    def _ref(self):
        self._ready()
        return self.dir if self.task is None else f"{self.id}_{self.task}"

    def __repr__(self):
        if self.call_dir is None:
            return "ExecutorJob(<in a batch, not submitted yet>)"
        return f"ExecutorJob({self._ref()!r}, dir={self.dir!r})"

    @property
    def job_id(self):
        self._ready()
        return self.id if self.task is None else f"{self.id}_{self.task}"

    @property
    def num_tasks(self):
        """How many ranks run the function (submitit's tasks of a job)."""
        self._ready()
        return self._world or self.plan["world_size"]

    def submission(self):
        """The call this job runs, as a DelayedSubmission (submitit's): its function, args and kwargs."""
        self._ready()
        with open(os.path.join(self.call_dir, "call.pkl"), "rb") as f:
            outer = pickle.load(f)
        if outer.get("calls") is not None:
            fn, args, kwargs = _cloudpickle().loads(outer["calls"])[self.task]
        else:
            fn, args, kwargs = _cloudpickle().loads(outer["call"])
        return DelayedSubmission(fn, *args, **kwargs)

    def done(self, force_check=False):
        """Whether the job has ended. force_check is submitit's (past its cache): every call here asks the
        scheduler."""
        self._ready()
        return super().done()

    def cancel(self, check=True, signal=None):
        """Cancels the job; check=False: quietly, also when the scheduler refuses (it ended already). signal="USR1":
        sends the job its warning instead (`hpclaunch cancel --signal`, local site): a Checkpointable call
        checkpoints, and the job runs again from the checkpoint."""
        self._ready()
        try:
            super().cancel(signal=signal)
        except HpclaunchError:
            if check:
                raise

    @classmethod
    def find(cls, ref, task=None):
        """The Executor job `ref` names (its id or directory, as Job), found again later, e.g. in a new session:
        its results are read from the call directory its job directory is in."""
        job = Job(ref)
        call_dir = os.path.dirname(job.dir)
        if not os.path.isfile(os.path.join(call_dir, "call.pkl")):
            raise HpclaunchError(f"hpclaunch: error: {ref}: not a job of hpclaunch.Executor (no call.pkl beside "
                                 f"{job.dir}); fix: look it up with hpclaunch.Job", 2)
        found = cls(None, call_dir, task=task)
        found.id, found.dir = job.id, job.dir
        return found

    def _out_dir(self):
        self._ready()
        return os.path.join(self.call_dir, "results" if self.task is None else f"task-{self.task}")

    @property
    def paths(self):
        return JobPaths(self.call_dir, self.dir, self._out_dir())

    def _read(self, path):
        try:
            with open(path, errors="replace") as f:
                return f.read()
        except FileNotFoundError:
            return None

    def stdout(self, rank=0):
        """What the function printed on stdout on `rank` (rank 0's by default); None before it ran."""
        return self._read(os.path.join(self._out_dir(), f"rank-{rank}.out"))

    def stderr(self, rank=0):
        """What the function printed on stderr on `rank`; None before it ran."""
        return self._read(os.path.join(self._out_dir(), f"rank-{rank}.err"))

    def _records(self):
        out_dir = self._out_dir()
        records = {}
        if os.path.isdir(out_dir):
            for name in os.listdir(out_dir):
                m = re.fullmatch(r"rank-(\d+)\.pkl", name)
                if m:
                    with open(os.path.join(out_dir, name), "rb") as f:
                        records[int(m.group(1))] = pickle.load(f)
        return records

    def results(self, timeout=None, progress=False):
        """Every rank's return value, by rank, once the job has ended (quietly; progress=True shows wait's line or
        a tqdm bar). An exception raised on any rank is raised here (the first one raised), with the remote
        traceback, its `.rank` and `.host`; a rank that crashed or called sys.exit raises JobFailedError naming it."""
        phase = self.wait(timeout, progress=progress)
        records = self._records()
        failed = sorted((r for r in records.values() if not r["ok"]), key=lambda r: r["time"])
        if failed:
            self._raise(failed[0], len(failed), phase)
        world = self._world or self.plan["world_size"]
        if phase != "completed" or len(records) < world:
            missing = [r for r in range(world) if r not in records]
            which = f"; no result from rank(s) {', '.join(map(str, missing[:8]))}" if missing else ""
            raise JobFailedError(f"hpclaunch: error: job {self._ref()} {phase}; {len(records)} of {world} ranks "
                                 f"returned a value{which}; see job.stderr(rank) or `hpclaunch logs {self._ref()}`", 1)
        cloudpickle = _cloudpickle()
        return [cloudpickle.loads(records[r]["value"]) for r in sorted(records)]

    def result(self, timeout=None, progress=False):
        """Rank 0's return value (see results())."""
        return self.results(timeout, progress)[0]

    def exception(self, timeout=None):
        """The exception the job raised, or None."""
        try:
            self.results(timeout)
        except Exception as e:  # noqa: BLE001
            return e
        return None

    def _raise(self, record, count, phase):
        where = f"rank {record['rank']} on host {record['host']}"
        if record.get("node"):
            where += f" (node {record['node']})"
        others = f" ({count - 1} other rank(s) failed after it)" if count > 1 else ""
        if record.get("crashed"):
            if record.get("signal"):
                how = f"was killed by signal {record['signal']} ({_signal_name(record['signal'])})"
            else:
                how = f"exited with code {record['exit_code']}"
            tail = record.get("output_tail") or []
            shown = "".join(f"\n    {line}" for line in tail[-_TAIL_SHOWN:])
            err = JobFailedError(f"hpclaunch: error: job {self._ref()} {phase}: {where} {how} before returning a "
                                 f"value{others}; its last lines:{shown or ' (none)'}", 1)
            err.returncode, err.signal, err.output_tail = record.get("exit_code"), record.get("signal"), tail
            err.rank, err.host = record["rank"], record["host"]
            raise err
        exc = None
        if record.get("exception"):
            try:
                exc = _cloudpickle().loads(record["exception"])
            except Exception:  # noqa: BLE001  (its class does not import here)
                exc = None
        cause = _RemoteTraceback(f'\n"""\n{where}{others}:\n{record["traceback"]}"""')
        if isinstance(exc, BaseException) and not isinstance(exc, Exception):
            # SystemExit, KeyboardInterrupt: raised here they would end the caller, past any `except Exception`.
            what = f"called sys.exit({exc.code!r})" if isinstance(exc, SystemExit) else f"raised {record['type']}"
            err = JobFailedError(f"hpclaunch: error: job {self._ref()} {phase}: {where} {what} before returning a "
                                 f"value{others}", 1)
            err.rank, err.host, err.remote_traceback = record["rank"], record["host"], record["traceback"]
            err.returncode = exc.code if isinstance(exc, SystemExit) else None
            raise err from cause
        if not isinstance(exc, BaseException):
            exc = RemoteError(f"{record['type']}: {record['message']}")
        exc.rank = record["rank"]
        exc.host = record["host"]
        exc.remote_traceback = record["traceback"]
        raise exc from cause


# submitit's parameter names that mean one of ours (update_parameters / the constructor take both).
_SUBMITIT_NAMES = {"timeout_min": "time", "slurm_partition": "partition", "slurm_account": "account",
                   "slurm_qos": "qos", "slurm_constraint": "constraint", "slurm_array_parallelism": "max_concurrent",
                   "array_parallelism": "max_concurrent", "slurm_job_name": "name", "job_name": "name"}


def _our_names(options):
    out = {}
    for key, value in options.items():
        out[_SUBMITIT_NAMES.get(key, key)] = value
    return out


class Executor:
    """Runs Python functions as jobs of a site: Executor(site="perlmutter", nodes=2, account="m1234_g").
    Every keyword is a `hpclaunch submit` option (underscores for hyphens), or submitit's name for one
    (timeout_min, slurm_partition, slurm_array_parallelism, ...); `python` is the interpreter the job runs
    (default: this one), `folder` where the jobs' directories go (default ./hpclaunch-jobs)."""

    def __init__(self, site, nodes=1, gpus_per_node=None, folder="hpclaunch-jobs", python=None, parameters=None,
                 **options):
        self.folder = os.fspath(folder)
        self.python = python or sys.executable
        self.options = dict(site=site, nodes=nodes, gpus_per_node=gpus_per_node)
        self.update_parameters(**dict(parameters or {}, **options))
        self._batch = None

    def update_parameters(self, **options):
        self.options.update(_our_names(options))

    def _submit(self, calls, array=False, extra=None):
        """Submits one job of `calls` (a list of (fn, args, kwargs)): a task each when `array`. Nothing is left
        behind when it fails: no call directory, and one error."""
        cloudpickle = _cloudpickle()
        fn = calls[0][0]
        name = re.sub(r"[^A-Za-z0-9_-]", "-", getattr(fn, "__name__", type(fn).__name__)).strip("-") or "call"
        try:
            pickled = cloudpickle.dumps(calls if array else calls[0])
        except Exception as e:  # noqa: BLE001  (TypeError, PicklingError, AttributeError: whatever pickle raises)
            raise HpclaunchError(f"hpclaunch: error: cannot pickle the call to {name}: {type(e).__name__}: {e}; "
                                 "fix: pass what pickles (no locks, open files or sockets in the function, its "
                                 "closure or its arguments; make them inside the function)", 2) from e
        made_folder = not os.path.isdir(self.folder)
        os.makedirs(self.folder, exist_ok=True)
        call_dir = os.path.abspath(tempfile.mkdtemp(prefix=f"{name}-py-", dir=self.folder))  # mode 0700
        try:
            outer = {"sys_path": list(sys.path), "call": None if array else pickled,
                     "calls": pickled if array else None}
            _write_private(os.path.join(call_dir, "call.pkl"), pickle.dumps(outer))
            options = dict(self.options)
            options.update(extra or {})
            checkpointable = any(callable(getattr(f, "checkpoint", None)) for f, _, _ in calls)
            if checkpointable and options.get("requeue") is None:
                options["requeue"] = True  # preempted or at its limit: checkpoint() and requeue, as submitit does
            env = dict(options.pop("env", None) or {})
            path = [_package_parent()] + [p for p in os.environ.get("PYTHONPATH", "").split(os.pathsep) if p]
            env.setdefault("PYTHONPATH", os.pathsep.join(path))
            if options.get("signal"):
                env.setdefault("HPCLAUNCH_CHECKPOINT_SIGNAL", str(options["signal"]).split("@")[0])
            options.setdefault("name", name)
            options.setdefault("detach", True)
            args = ["submit", "--json", "--job-dir", os.path.join(call_dir, "job")] + _cli.flags(dict(options, env=env))
            args += ["--", self.python, "-m", "hpclaunch._worker", call_dir]
            _, doc = _cli.run_json(args, echo=_warnings_only, ok_codes=range(1, 256))
        except BaseException:
            shutil.rmtree(call_dir, ignore_errors=True)
            if made_folder:
                try:
                    os.rmdir(self.folder)
                except OSError:
                    pass  # something else went there meanwhile
            raise
        return doc, call_dir

    def submit(self, fn, *args, **kwargs):
        """Runs fn(*args, **kwargs) on every rank of one job; returns its ExecutorJob at once (on every site). In
        a `with ex.batch():` block, the job is submitted when the block ends, as a task of one array job."""
        if self._batch is not None:
            job = ExecutorJob(None, None)
            self._batch.append(((fn, args, kwargs), job))
            return job
        doc, call_dir = self._submit([(fn, args, kwargs)])
        return ExecutorJob(doc, call_dir, world_size=doc["plan"]["world_size"])

    def map_array(self, fn, *iterables, max_concurrent=None):
        """One array job, task i running fn(a[i], b[i], ...) for the iterables a, b, ... (as map() and submitit's
        map_array); returns one ExecutorJob per task, in order (job.result() is that task's rank-0 value)."""
        calls = [(fn, tuple(args), {}) for args in zip(*iterables)]
        return self._submit_array(calls, max_concurrent)

    def submit_array(self, fns):
        """One array job, task i calling fns[i]() (submitit's submit_array); one ExecutorJob per task, in order."""
        return self._submit_array([(fn, (), {}) for fn in fns])

    def _submit_array(self, calls, max_concurrent=None):
        if not calls:
            return []
        extra = {"array": len(calls)}
        if max_concurrent is not None:
            extra["max_concurrent"] = max_concurrent
        doc, call_dir = self._submit(calls, array=True, extra=extra)
        world = doc["plan"]["world_size"]
        return [ExecutorJob(doc, call_dir, task=i, world_size=world) for i in range(len(calls))]

    @contextmanager
    def batch(self):
        """`with ex.batch(): jobs = [ex.submit(f, x) for x in xs]`: the calls submitted in the block go as one
        array job when it ends (submitit's batch); the jobs are usable after the block."""
        if self._batch is not None:
            raise HpclaunchError("hpclaunch: error: executor.batch() blocks do not nest; fix: use one block", 2)
        self._batch = pending = []
        try:
            yield
        finally:
            self._batch = None
        submitted = self._submit_array([call for call, _ in pending])
        for (_, placeholder), job in zip(pending, submitted):
            placeholder.__dict__.update(job.__dict__)


def as_completed(jobs, timeout=None, poll_interval=1.0):
    """Yields the jobs as they end (submitit's helpers.as_completed): each job once, the first to end first. Each
    poll is one `hpclaunch status` for all the jobs left (one query per scheduler, not one per job).
    Raises HpclaunchError (exit code 124) when `timeout` seconds pass first."""
    left = list(jobs)
    deadline = None if timeout is None else _time.monotonic() + timeout
    while left:
        for job, doc in list(zip(left, Job.statuses(left))):
            if doc["state"]["finished"]:
                left.remove(job)
                yield job
        if not left:
            return
        if deadline is not None and _time.monotonic() >= deadline:
            raise HpclaunchError(f"hpclaunch: error: {len(left)} job(s) still running after {timeout} s; fix: wait "
                                 "longer (timeout=)", 124)
        _time.sleep(poll_interval)
