"""submitit 1.5.4 (PyPI, in the peers' venv) as the peer of our Executor: its public surface, walked from the
installed package, is ours or listed in docs/python.md as not supported (with why); and the same small functions
give the same results through submitit's LocalExecutor and through our Executor on the local site, a
Checkpointable interrupted once included. Run by
t0803-python-submitit under the peers' venv (torch 2.15, submitit)."""
import inspect
import os
import re
import time
import types

import cloudpickle
import pytest
import submitit

import hpclaunch
from conftest import SOURCE_DIR, wait_for_file

# This module is pickled by value: both executors' jobs import the functions from the pickle, not from here.
cloudpickle.register_pickle_by_value(__import__(__name__))

# submitit's classes that are ours under another name: its Job is what Executor.submit returns (hpclaunch.Job is a
# command's job, ExecutorJob's base).
OURS = {"Job": hpclaunch.ExecutorJob}
# The packages its classes are implemented in: their public names are the ones __init__ exports, walked below.
IMPLEMENTATION_MODULES = {"auto", "core", "local", "slurm"}


def submitit_surface():
    """The public names of submitit as installed, as docs/python.md spells them: `AutoExecutor`, `Job.cancel`,
    `Job.cancel(check)` (a parameter), `Executor(folder)` (a constructor's), `helpers.clean_env`; each with ours
    (None when we have none). A class we lack is one name: its members are not walked."""
    surface = {}

    def walk_class(name, theirs, ours):
        members = [("__init__", getattr(theirs, "__init__"))] + [
            (n, v) for n, v in inspect.getmembers(theirs) if not n.startswith("_")]
        for member, value in members:
            qualified = name if member == "__init__" else f"{name}.{member}"
            mine = getattr(ours, member, None) if ours is not None else None
            if member != "__init__":
                surface[qualified] = mine
            if callable(value) and not isinstance(value, type):
                for p in _named_parameters(value):
                    accepted = mine is not None and p in _named_parameters(mine)
                    surface[f"{qualified}({p})"] = accepted or None

    for name in sorted(n for n in dir(submitit) if not n.startswith("_") and n not in IMPLEMENTATION_MODULES):
        theirs = getattr(submitit, name)
        ours = OURS.get(name, getattr(hpclaunch, name, None))
        surface[name] = ours
        if name in ("Executor", "Job", "JobEnvironment") or (name == "AutoExecutor" and ours is not None):
            walk_class(name, theirs, ours)
    for name in sorted(n for n in dir(submitit.helpers) if not n.startswith("_")):
        theirs = getattr(submitit.helpers, name)
        if isinstance(theirs, types.ModuleType) or not getattr(theirs, "__module__", "").startswith("submitit"):
            continue  # what helpers imports for itself (os, Path, typing)
        ours = getattr(hpclaunch.helpers, name, None)
        surface[f"helpers.{name}"] = ours
        if isinstance(theirs, type) and ours is not None and theirs is not getattr(submitit, name, None):
            walk_class(f"helpers.{name}", theirs, ours)
    return surface


def _named_parameters(fn):
    try:
        sig = inspect.signature(fn)
    except (TypeError, ValueError):
        return []
    return [p.name for p in sig.parameters.values()
            if p.name != "self" and p.kind not in (p.VAR_POSITIONAL, p.VAR_KEYWORD)]


def documented_as_unsupported():
    """The first column of docs/python.md's table of submitit names we do not have: {name: why}."""
    with open(os.path.join(SOURCE_DIR, "docs", "python.md")) as f:
        text = f.read()
    section = re.search(r"^#### submitit names we do not have\n(.*?)(?=^#|\Z)", text, re.S | re.M)
    assert section, "docs/python.md has no '#### submitit names we do not have' section"
    rows = re.findall(r"^\| `([^`]+)` \| (.+?) \|$", section.group(1), re.M)
    return dict(rows)


def test_submitit_surface_is_ours_or_documented_as_not_supported():
    assert submitit.__version__ == "1.5.4"
    surface = submitit_surface()
    assert len(surface) > 80, sorted(surface)  # the walk found submitit's names
    missing = {name for name, ours in surface.items() if ours is None}
    documented = documented_as_unsupported()
    assert all(why.strip() for why in documented.values())
    undocumented = sorted(missing - set(documented))
    assert not undocumented, f"submitit names we lack that docs/python.md does not list (with why): {undocumented}"
    stale = sorted(set(documented) - missing)
    assert not stale, f"docs/python.md lists as not supported what we have (or submitit lacks): {stale}"


# The same functions through both executors.

class Boom(ValueError):
    pass


def record(x):
    return {"x": x, "squares": [i * i for i in range(x)]}


def boom(word):
    raise Boom(f"rank says {word}")


def all_reduce_rank(scale):
    import torch
    import torch.distributed as dist

    if "MASTER_ADDR" not in os.environ:  # submitit's tasks: its helper exports torch's variables (ours launch has)
        submitit.helpers.TorchDistributedEnvironment().export(set_cuda_visible_devices=False)
    os.environ.setdefault("GLOO_SOCKET_IFNAME", "lo")
    dist.init_process_group("gloo")
    t = torch.tensor([float(dist.get_rank() + 1)])
    dist.all_reduce(t)
    out = (dist.get_rank(), dist.get_world_size(), t.item() * scale)
    dist.destroy_process_group()
    return out


def both(workdir, **ours):
    """submitit's LocalExecutor and our Executor on the local site, with the same size of job."""
    tasks = ours.get("nodes", 1) * ours.get("gpus_per_node", 1)
    theirs = submitit.LocalExecutor(folder=workdir / "submitit")
    theirs.update_parameters(timeout_min=5, nodes=1, tasks_per_node=tasks)  # it has one node: a task per worker
    return theirs, hpclaunch.Executor(site="local", folder=workdir / "hpclaunch", launcher="srun",
                                      **dict({"nodes": 1, "gpus_per_node": 1}, **ours))


def test_a_value(workdir):
    theirs, ours = both(workdir)
    expected = record(4)
    assert theirs.submit(record, 4).result() == expected
    assert ours.submit(record, 4).result() == expected


def test_an_exception(workdir):
    theirs, ours = both(workdir)
    with pytest.raises(submitit.core.utils.FailedJobError) as e:
        theirs.submit(boom, "no").result()
    their_last = str(e.value).split("\n\n---")[0].splitlines()[-1]
    with pytest.raises(Boom) as e:  # ours raises the exception itself, its traceback as the cause
        ours.submit(boom, "no").result()
    assert str(e.value) == "rank says no"
    our_last = e.value.remote_traceback.rstrip("\n").splitlines()[-1]
    # The same last line of the remote traceback (the class's qualified name: pickled by value, its module).
    assert their_last.endswith("Boom: rank says no") and our_last.endswith("Boom: rank says no"), (their_last, our_last)
    assert isinstance(ours.submit(boom, "no").exception(), Boom)
    assert isinstance(theirs.submit(boom, "no").exception(), submitit.core.utils.FailedJobError)


def test_a_gloo_all_reduce_of_2x2_workers(workdir):
    theirs, ours = both(workdir, nodes=2, gpus_per_node=2)
    expected = [(r, 4, 20.0) for r in range(4)]  # (1+2+3+4) * 2 on every rank
    assert theirs.submit(all_reduce_rank, 2).results() == expected
    assert ours.submit(all_reduce_rank, 2).results() == expected


def test_map_array(workdir):
    theirs, ours = both(workdir)
    their_jobs = theirs.map_array(pow, [2, 3, 4], [2, 2, 3])
    our_jobs = ours.map_array(pow, [2, 3, 4], [2, 2, 3])
    assert [j.result() for j in their_jobs] == [j.result() for j in our_jobs] == [4, 9, 64]
    assert len({j.job_id for j in our_jobs}) == 3 and len({j.id for j in our_jobs}) == 1  # one array job


class CountRuns(submitit.helpers.Checkpointable):
    """Counts its runs (the count is the state its checkpoint keeps); the first one writes `marker` and waits to be
    interrupted. submitit's own Checkpointable: a submitit script's class, run by both executors unchanged."""

    def __init__(self):
        self.runs = 0

    def __call__(self, marker, x):
        self.runs += 1
        if self.runs == 1:
            with open(marker, "w"):
                pass
            time.sleep(300)
        return {"x": x, "runs": self.runs}


def test_a_checkpointable_interrupted_once_resumes_from_its_checkpoint(workdir):
    theirs, ours = both(workdir)
    # submitit's LocalExecutor interrupts a run at its time limit: USR2 signal_delay_s before timeout_min, then it
    # runs the task again when it exits 144 (its LocalJob._interrupt() signals the controller, which dies of it).
    # Ours: the warning sent by `hpclaunch cancel --signal USR1`, then the local runner runs the job again on 99.
    theirs.update_parameters(timeout_min=30 / 60, signal_delay_s=15)  # the warning 15 s in; the 2nd run is quick
    their_job = theirs.submit(CountRuns(), str(workdir / "theirs-running"), 3)
    our_job = ours.submit(CountRuns(), str(workdir / "ours-running"), 3)
    wait_for_file(workdir / "ours-running")
    our_job.cancel(signal="USR1")
    expected = {"x": 3, "runs": 2}  # the second run, from the state the first one checkpointed
    assert their_job.result() == expected
    assert our_job.result() == expected
    assert "checkpointed" in our_job.stderr()
    with open(os.path.join(our_job.dir, "output.log")) as f:
        assert "requeueing job" in f.read()
