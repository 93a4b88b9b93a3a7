"""Executor on the real Slurm test cluster (scripts/test-cluster.sh: 2 nodes, Perlmutter's shape): a gloo
all_reduce over 2 nodes, a cancelled job's result() raising, and map_array as one array job."""
import os
import re
import time

import cloudpickle
import pytest

import hpclaunch
from conftest import SOURCE_DIR

cloudpickle.register_pickle_by_value(__import__(__name__))

SITE = dict(site="test-perlmutter", account="m1234_g",
            site_file=os.path.join(SOURCE_DIR, "tests", "integration", "sites", "test-perlmutter.yaml"))


def all_reduce_rank():
    import socket

    import torch
    import torch.distributed as dist

    os.environ.setdefault("GLOO_SOCKET_IFNAME", "lo")
    dist.init_process_group("gloo")
    t = torch.tensor([float(dist.get_rank() + 1)])
    dist.all_reduce(t)
    out = (dist.get_rank(), dist.get_world_size(), t.item(), os.environ["SLURMD_NODENAME"], socket.gethostname())
    dist.destroy_process_group()
    return out


def square_on_rank_0(x):
    env = hpclaunch.JobEnvironment()  # Slurm's ids, as the launcher exports them (HPCLAUNCH_ARRAY_JOB_ID, ...)
    return (x * x, env.global_rank, env.array_task_id, env.job_id, env.hostname)


def sleep_long():
    time.sleep(600)


def fail_on_rank_1():
    if os.environ["RANK"] == "1":
        raise KeyError("missing on rank 1")
    time.sleep(1)
    return 0


def test_all_reduce_on_2_slurm_nodes(workdir):
    ex = hpclaunch.Executor(nodes=2, gpus_per_node=1, launcher="srun", time="5", **SITE)
    job = ex.submit(all_reduce_rank)
    assert job.id.isdigit()
    results = job.results(timeout=240)
    assert [r[:3] for r in results] == [(0, 2, 3.0), (1, 2, 3.0)]
    assert sorted(r[3] for r in results) == ["n1", "n2"]  # one rank on each node
    assert job.state() == "completed"


def test_exception_comes_back_from_slurm(workdir):
    ex = hpclaunch.Executor(nodes=2, gpus_per_node=1, launcher="agent", time="5", **SITE)
    job = ex.submit(fail_on_rank_1)
    with pytest.raises(KeyError) as e:
        job.result(timeout=240)
    assert e.value.rank == 1 and "(node n" in str(e.value.__cause__) and "missing on rank 1" in str(e.value.__cause__)


def test_a_cancelled_jobs_result_raises(workdir):
    ex = hpclaunch.Executor(nodes=1, gpus_per_node=1, launcher="srun", time="5", **SITE)
    job = ex.submit(sleep_long)
    for _ in range(600):
        if job.state() == "running":
            break
        time.sleep(0.2)
    job.cancel()
    with pytest.raises(hpclaunch.JobFailedError) as e:
        job.result(timeout=120)
    assert "cancelled" in e.value.message and e.value.exit_code == 1


def test_map_array_4_items_2_at_a_time(workdir):
    ex = hpclaunch.Executor(nodes=1, gpus_per_node=1, launcher="srun", time="5", **SITE)
    jobs = ex.map_array(square_on_rank_0, [3, 1, 4, 1], max_concurrent=2)
    assert len(jobs) == 4 and len({j.id for j in jobs}) == 1  # one array job
    plan = jobs[0].plan
    assert plan["array"]["tasks"] == 4 and plan["array"]["max_concurrent"] == 2
    with open(os.path.join(jobs[0].dir, "job.sh")) as f:
        assert "#SBATCH --array=0-3%2" in f.read()
    results = [j.result(timeout=240) for j in jobs]
    assert [r[:3] for r in results] == [(9, 0, 0), (1, 0, 1), (16, 0, 2), (1, 0, 3)]
    assert [r[3] for r in results] == [j.job_id for j in jobs]  # ARRAY_I, as ExecutorJob names the task
    assert all(r[4] in ("n1", "n2") for r in results), results  # the Slurm node, not the host


def test_wait_shows_the_steps_as_a_tqdm_bar(workdir, capsys):
    import tqdm  # noqa: F401  (python3-tqdm, scripts/install-deps.sh; without it wait prints the plain line)

    write = ("for s in 1 2 3; do printf '{\"type\":\"step\",\"step\":%s,\"loss\":0.5}\\n' $s "
             '>> "$HPCLAUNCH_JOB_DIR/metrics.jsonl"; sleep 1; done')
    job = hpclaunch.submit(["sh", "-c", write], nodes=1, gpus_per_node=1, launcher="srun", time="5", **SITE)
    capsys.readouterr()
    assert job.wait(interval=0.2) == "completed"
    err = capsys.readouterr().err
    assert re.search(r"COMPLETED: 3step", err), err
    assert "loss 0.5" in err, err


class Counter(hpclaunch.helpers.Checkpointable):
    """Counts its runs; the first one waits to be preempted (a marker file per rank tells the test it runs)."""

    def __init__(self):
        self.runs = 0

    def __call__(self, marker):
        self.runs += 1
        if self.runs == 1:
            with open(f"{marker}.{os.environ['RANK']}", "w") as f:
                f.write(os.environ["SLURM_JOB_ID"])
            time.sleep(600)
        return (self.runs, int(os.environ.get("SLURM_RESTART_COUNT", "0")))


def test_a_preempted_checkpointable_job_is_requeued_and_resumes(workdir):
    import subprocess

    # 15 minutes: Slurm's own warning (--signal USR1@120) comes 2 minutes before the limit, so with 5 a second run
    # that started slowly (a loaded machine: a cold CI run once) was warned again and requeued a second time.
    ex = hpclaunch.Executor(nodes=1, gpus_per_node=2, launcher="srun", time="15", **SITE)
    marker = workdir / "running"
    job = ex.submit(Counter(), str(marker))
    with open(os.path.join(job.dir, "job.sh")) as f:
        assert "#SBATCH --signal=B:USR1@" in f.read()  # asked for --requeue
    # The warning only once both ranks run (1 node x 2 GPUs, a rank per GPU): a rank still starting has no handler
    # yet, and SIGUSR1 killed it (rank 0, the one that checkpoints: the next run started from scratch and slept).
    markers = [workdir / f"running.{rank}" for rank in (0, 1)]
    for _ in range(1200):
        if all(m.exists() for m in markers):
            break
        time.sleep(0.2)
    assert all(m.exists() for m in markers), "the job's ranks never started"
    subprocess.run(["scancel", "--signal=USR1", "--batch", job.id], check=True)  # as a preemption's warning
    assert job.result(timeout=300) == (2, 1)  # the second run, from the checkpoint, after one requeue
    assert "checkpointed" in job.stderr()
