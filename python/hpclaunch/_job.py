"""submit, render, jobs, sites and Job: the CLI's commands with --json, as Python values."""
import json
import os
import re
import shlex
import sys

from . import _cli
from ._cli import HpclaunchError

__all__ = ["Job", "submit", "render", "jobs", "sites", "site"]


def _command(command):
    if isinstance(command, str):
        return shlex.split(command)
    return [str(c) for c in command]


def _submit_args(verb, command, options):
    args = [verb, "--json"] + _cli.flags(options) + ["--"] + _command(command)
    return args


def submit(command, site=None, nodes=None, gpus_per_node=None, time=None, account=None, launcher=None, env=None,
           sweep=None, dry_run=False, detach=True, **options):
    """Submits `command` (a string, split as a shell would, or a list) as `hpclaunch submit` does; every keyword is
    that command's option of the same name (underscores for hyphens). Returns the Job at once, on every site (a
    local job runs here in the background: `submit --detach`; detach=False runs it in the foreground first); with
    dry_run=True, the script it would submit."""
    named = dict(site=site, nodes=nodes, gpus_per_node=gpus_per_node, time=time, account=account,
                 launcher=launcher, env=env, sweep=sweep, dry_run=dry_run, detach=detach and not dry_run)
    named.update(options)
    rc, doc = _cli.run_json(_submit_args("submit", command, named), echo=True, ok_codes=range(1, 256))
    if doc.get("schema", "").startswith("hpclaunch.render/"):
        return doc["script_text"]
    return Job(doc["job"]["job_id"], _record=doc)


def render(command, **options):
    """The batch script `hpclaunch render` prints for `command` and these options."""
    _, doc = _cli.run_json(_submit_args("render", command, options))
    return doc["script_text"]


def jobs():
    """The jobs submitted from this machine (`hpclaunch jobs --json`): one dict per job, oldest first."""
    _, doc = _cli.run_json(["jobs", "--json"])
    return doc["jobs"]


def sites():
    """The site profiles (`hpclaunch sites --json`): one dict per site."""
    _, doc = _cli.run_json(["sites", "--json"])
    return doc["sites"]


def site(name):
    """One site profile, resolved (`hpclaunch sites show NAME --json`)."""
    _, doc = _cli.run_json(["sites", "show", name, "--json"])
    return doc["profile"]


class _ProgressBar:
    """wait's progress lines ("1234 RUNNING 0:42 step 120 loss 0.0312 ...") as a tqdm bar: n is the step, the
    description the state, the rest its postfix. Other lines (notes) pass on to stderr. The bar is made at the
    second line: a job that had ended already (one line, its final state) shows none."""

    _LINE = re.compile(r"^(\S+) (\S+)(?: [0-9:]+)?(?: step (\d+))?(.*)$")

    def __init__(self, tqdm):
        self.tqdm = tqdm
        self.bar = None
        self.first = None

    @classmethod
    def make(cls):
        import warnings

        try:
            with warnings.catch_warnings():  # Jupyter without ipywidgets: tqdm warns, and draws a text bar
                warnings.simplefilter("ignore")
                from tqdm.auto import tqdm
        except ImportError:
            return None
        return cls(tqdm)

    def line(self, line):
        m = self._LINE.match(line.rstrip("\n"))
        if line.startswith("hpclaunch:") or not m:
            if self.bar is None:
                sys.stderr.write(line)
            else:
                self.bar.write(line.rstrip("\n"), file=sys.stderr)
            return
        if self.first is None:
            self.first = line
            return
        if self.bar is None:
            self.bar = self.tqdm(total=None, unit="step", dynamic_ncols=True)
            self._show(self._LINE.match(self.first.rstrip("\n")))
        self._show(m)

    def _show(self, m):
        self.bar.set_description_str(m.group(2), refresh=False)
        if m.group(3):
            self.bar.update(int(m.group(3)) - self.bar.n)
        if m.group(4).strip():
            self.bar.set_postfix_str(m.group(4).strip(), refresh=False)
        self.bar.refresh()

    def close(self):
        if self.bar is not None:
            self.bar.close()


class Job:
    """A job submitted by hpclaunch, found again from its id or its directory: Job("1234"), Job("hpclaunch-jobs/x")."""

    def __init__(self, ref, _record=None):
        self._submitted = _record
        if _record is not None:
            self.id = _record["job"]["job_id"]
            self.dir = _record["job"]["job_dir"]
        else:
            status = self.status(os.fspath(ref))
            self.id = status["job_id"]
            self.dir = status["dir"]

    def __repr__(self):
        return f"Job({self.id!r}, dir={self.dir!r})"

    @property
    def job_id(self):
        """The scheduler's job id (submitit's name for `id`)."""
        return self.id

    @property
    def plan(self):
        """The resolved plan (plan.json)."""
        with open(os.path.join(self.dir, "plan.json")) as f:
            return json.load(f)

    def _ref(self):
        return self.dir  # what the CLI is given to name this job

    def status(self, _ref=None):
        """`hpclaunch status --json`: the job's state and, for an array, each task's."""
        _, doc = _cli.run_json(["status", "--json", _ref or self._ref()])
        return doc

    def state(self):
        """The job's phase: pending, running, completed, failed, cancelled, timeout or finished."""
        return self.status()["state"]["phase"]

    def done(self):
        return self.status()["state"]["finished"]

    @staticmethod
    def statuses(jobs):
        """Every job's `status --json` document, in order, from one `hpclaunch status` (one query per scheduler)."""
        jobs = list(jobs)
        if not jobs:
            return []
        docs = _cli.run_json_lines(["status", "--json"] + [job._ref() for job in jobs])
        if len(docs) != len(jobs):
            raise HpclaunchError(f"hpclaunch: error: `hpclaunch status` answered {len(docs)} of {len(jobs)} jobs", 1)
        return docs

    def wait(self, timeout=None, interval=None, progress=True):
        """Waits for the job to end, showing `hpclaunch wait`'s progress line on stderr (a tqdm bar of the
        trainer's steps when tqdm is installed; progress=False: nothing); returns its final phase. Raises
        HpclaunchError (exit code 124) when `timeout` seconds pass first."""
        args = ["wait", "--json", self._ref()]
        if timeout:
            args += ["--timeout", str(timeout)]
        if interval:
            args += ["--interval", str(interval)]
        bar = _ProgressBar.make() if progress else None
        echo = bar.line if bar else (True if progress else (lambda line: None))
        try:
            _, doc = _cli.run_json(args, echo=echo, ok_codes=(1, 3))
        finally:
            if bar:
                bar.close()
        return doc["state"]["phase"]

    def logs(self, rank=None, task=None):
        """The job's output (`hpclaunch logs --json`): one rank's lines with `rank`; an array's tasks in turn."""
        args = ["logs", "--json", self._ref()]
        if rank is not None:
            args += ["--rank", str(rank)]
        if task is not None:
            args += ["--task", str(task)]
        _, doc = _cli.run_json(args)
        if doc["tasks"]:
            return "".join(f"==> {t['job_id']} <==\n" + (t["text"] if t["text"] is not None else "(no output yet)\n")
                           for t in doc["tasks"])
        return doc["text"]

    def stdout(self):
        """The job's output file (submitit's name; the scheduler writes both streams to it), or None before the
        job wrote any."""
        try:
            return self.logs()
        except HpclaunchError:
            return None

    def stderr(self):
        """None: the job's stderr is in its one output file (stdout()). An Executor job has each rank's apart."""
        return None

    def cancel(self, signal=None):
        """Cancels the job (`hpclaunch cancel --json`); with signal="USR1" sends the job that warning instead
        (`hpclaunch cancel --signal USR1`: a Checkpointable call checkpoints and its job is requeued)."""
        if signal is not None:
            _cli.check(["cancel", "--signal", signal, self._ref()])
            return
        _cli.run_json(["cancel", "--json", self._ref()])

    def metrics(self, as_frame=False):
        """The records of the job's metrics file (hpclaunch-train --metrics, or JSON lines of your own): a list of
        dicts, or a pandas DataFrame with as_frame=True."""
        path = self.status()["metrics_file"]
        rows = []
        if os.path.exists(path):
            with open(path) as f:
                for line in f:
                    try:
                        value = json.loads(line)
                    except ValueError:
                        continue  # a line being written
                    if isinstance(value, dict):
                        rows.append(value)
        if as_frame:
            try:
                import pandas
            except ImportError:
                raise ImportError("as_frame=True needs pandas (apt install python3-pandas, or pip install pandas)")
            return pandas.DataFrame(rows)
        return rows

    def plot(self, path=None):
        """Draws the job's curves (`hpclaunch plot`) into a PNG; returns its path (shown inline in Jupyter)."""
        path = os.fspath(path) if path else os.path.join(self.dir, "metrics.png")
        _cli.check(["plot", self.dir, "--output", path])
        try:
            from IPython import get_ipython
            from IPython.display import Image, display
            if get_ipython() is not None:
                display(Image(filename=path))
        except ImportError:
            pass
        return path
