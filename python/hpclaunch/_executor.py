"""Executor: a Python function run on every rank of a job (submitit's shape): ex.submit(fn, *args) -> job,
job.result() is rank 0's value; ex.map_array(fn, items) is one array job, one task per item."""
import os
import pickle
import re
import sys
import tempfile

from . import _cli
from ._cli import HpclaunchError
from ._job import Job

__all__ = ["Executor", "ExecutorJob", "RemoteError", "JobFailedError"]


class JobFailedError(HpclaunchError):
    """The job ended without every rank returning (failed, cancelled, timed out)."""


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


class ExecutorJob(Job):
    """A Job whose command is a Python call: result() is rank 0's return value, results() every rank's."""

    def __init__(self, record, call_dir, task=None, world_size=None):
        if record is not None:
            super().__init__(None, _record=record)
        self.call_dir = call_dir
        self.task = task
        self._world = world_size

    def _ref(self):
        return self.dir if self.task is None else f"{self.id}_{self.task}"

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

    def _records(self):
        out_dir = os.path.join(self.call_dir, "results" if self.task is None else f"task-{self.task}")
        records = {}
        if os.path.isdir(out_dir):
            for name in os.listdir(out_dir):
                m = re.fullmatch(r"rank-(\d+)\.pkl", name)
                if m:
                    with open(os.path.join(out_dir, name), "rb") as f:
                        records[int(m.group(1))] = pickle.load(f)
        return records

    def results(self, timeout=None):
        """Every rank's return value, by rank, once the job has ended. An exception raised on any rank is raised
        here (the first one raised), with the remote traceback, its `.rank` and `.host`."""
        phase = self.wait(timeout)
        records = self._records()
        failed = sorted((r for r in records.values() if not r["ok"]), key=lambda r: r["time"])
        if failed:
            self._raise(failed[0], len(failed))
        world = self._world or self.plan["world_size"]
        if phase != "completed" or len(records) < world:
            raise JobFailedError(f"hpclaunch: error: job {self._ref()} {phase}; {len(records)} of {world} ranks "
                                 f"returned a value; see job.logs() or `hpclaunch logs {self._ref()}`", 1)
        cloudpickle = _cloudpickle()
        return [cloudpickle.loads(records[r]["value"]) for r in sorted(records)]

    def result(self, timeout=None):
        """Rank 0's return value (see results())."""
        return self.results(timeout)[0]

    def exception(self, timeout=None):
        """The exception the job raised, or None."""
        try:
            self.results(timeout)
        except Exception as e:  # noqa: BLE001
            return e
        return None

    def _raise(self, record, count):
        where = f"rank {record['rank']} on host {record['host']}"
        if record.get("node"):
            where += f" (node {record['node']})"
        exc = None
        if record.get("exception"):
            try:
                exc = _cloudpickle().loads(record["exception"])
            except Exception:  # noqa: BLE001  (its class does not import here)
                exc = None
        if not isinstance(exc, BaseException):
            exc = RemoteError(f"{record['type']}: {record['message']}")
        others = f" ({count - 1} other rank(s) failed after it)" if count > 1 else ""
        exc.rank = record["rank"]
        exc.host = record["host"]
        exc.remote_traceback = record["traceback"]
        raise exc from _RemoteTraceback(f'\n"""\n{where}{others}:\n{record["traceback"]}"""')


class Executor:
    """Runs Python functions as jobs of a site: Executor(site="perlmutter", nodes=2, account="m1234_g").
    Every keyword is a `hpclaunch submit` option (underscores for hyphens); `python` is the interpreter the job
    runs (default: this one), `folder` where the jobs' directories go (default ./hpclaunch-jobs)."""

    def __init__(self, site, nodes=1, gpus_per_node=None, folder="hpclaunch-jobs", python=None, **options):
        self.folder = os.fspath(folder)
        self.python = python or sys.executable
        self.options = dict(site=site, nodes=nodes, gpus_per_node=gpus_per_node, **options)

    def update_parameters(self, **options):
        self.options.update(options)

    def _submit(self, fn, args, kwargs, items=None, extra=None):
        cloudpickle = _cloudpickle()
        os.makedirs(self.folder, exist_ok=True)
        name = re.sub(r"[^A-Za-z0-9_-]", "-", getattr(fn, "__name__", "call")).strip("-") or "call"
        call_dir = tempfile.mkdtemp(prefix=f"{name}-py-", dir=self.folder)  # mode 0700
        call_dir = os.path.abspath(call_dir)
        outer = {"sys_path": list(sys.path), "call": cloudpickle.dumps((fn, args, kwargs)),
                 "items": cloudpickle.dumps(list(items)) if items is not None else None}
        _write_private(os.path.join(call_dir, "call.pkl"), pickle.dumps(outer))
        options = dict(self.options)
        options.update(extra or {})
        env = dict(options.pop("env", None) or {})
        path = [_package_parent()] + [p for p in os.environ.get("PYTHONPATH", "").split(os.pathsep) if p]
        env.setdefault("PYTHONPATH", os.pathsep.join(path))
        options.setdefault("name", name)
        args_ = ["submit", "--json", "--job-dir", os.path.join(call_dir, "job")] + _cli.flags(dict(options, env=env))
        args_ += ["--", self.python, "-m", "hpclaunch._worker", call_dir]
        _, doc = _cli.run_json(args_, echo=True, ok_codes=range(1, 256))
        return doc, call_dir

    def submit(self, fn, *args, **kwargs):
        """Runs fn(*args, **kwargs) on every rank of one job; returns its ExecutorJob."""
        doc, call_dir = self._submit(fn, args, kwargs)
        return ExecutorJob(doc, call_dir, world_size=doc["plan"]["world_size"])

    def map_array(self, fn, items, max_concurrent=None):
        """One array job, task i running fn(items[i]) on every rank of its own allocation; returns one ExecutorJob
        per item, in order (job.result() is that item's rank-0 value)."""
        items = list(items)
        if not items:
            return []
        doc, call_dir = self._submit(fn, (), {}, items=items,
                                     extra={"array": len(items), "max_concurrent": max_concurrent})
        world = doc["plan"]["world_size"]
        return [ExecutorJob(doc, call_dir, task=i, world_size=world) for i in range(len(items))]
