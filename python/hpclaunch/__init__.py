"""hpclaunch from Python: submit a command or a Python function to a site's scheduler, follow it, get results.

    import hpclaunch
    job = hpclaunch.submit("python train.py", site="local", nodes=2, gpus_per_node=2)
    job.wait(); print(job.logs(rank=0))
    ex = hpclaunch.Executor(site="perlmutter", nodes=2, account="m1234_g")
    print(ex.submit(fn, 3).result())

Every keyword is the CLI option of the same name (docs/python.md); errors are HpclaunchError with the CLI's
one-line message and exit code."""
from ._cli import HpclaunchError, binary
from ._executor import (Checkpointable, DelayedSubmission, Executor, ExecutorJob, JobEnvironment, JobFailedError,
                        JobPaths, RemoteError, as_completed)
from ._job import Job, jobs, render, site, sites, submit
from . import helpers, progress

__version__ = "0.1.0"
__all__ = ["HpclaunchError", "JobFailedError", "RemoteError", "Job", "ExecutorJob", "Executor", "JobEnvironment",
           "JobPaths", "Checkpointable", "DelayedSubmission", "as_completed", "helpers", "submit", "render", "jobs",
           "sites", "site", "binary", "main", "progress"]


def main(argv=None):
    """`python -m hpclaunch ARGS` and the `hpclaunch` command a wheel installs: runs the binary with ARGS."""
    import os
    import sys

    argv = sys.argv[1:] if argv is None else list(argv)
    try:
        path = binary()
    except HpclaunchError as e:
        print(e.message, file=sys.stderr)
        return e.exit_code
    os.execv(path, [path] + argv)
