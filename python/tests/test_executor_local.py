"""Executor on the local site: a function on every rank of 2 emulated nodes x 2 workers, doing a real gloo
all_reduce with Debian's python3-torch (run under /usr/bin/python3); an exception on rank 3 comes back."""
import os

import cloudpickle
import pytest

import hpclaunch

# This module is pickled by value: the job's Python imports the functions from the pickle, not from here.
cloudpickle.register_pickle_by_value(__import__(__name__))


def all_reduce_rank(scale):
    import torch
    import torch.distributed as dist

    os.environ.setdefault("GLOO_SOCKET_IFNAME", "lo")
    dist.init_process_group("gloo")  # the rendezvous variables are set: nothing to pass
    t = torch.tensor([float(dist.get_rank() + 1)])
    dist.all_reduce(t)
    out = {"rank": dist.get_rank(), "world": dist.get_world_size(), "sum": t.item() * scale,
           "local_rank": int(os.environ["LOCAL_RANK"])}
    dist.destroy_process_group()
    return out


class Boom(ValueError):
    pass


def fail_on_rank_3():
    rank = int(os.environ["RANK"])
    if rank == 3:
        raise Boom(f"rank {rank} says no")
    return rank


@pytest.mark.parametrize("launcher", ["agent", "srun"])
def test_all_reduce_on_2_nodes_x_2_workers(workdir, launcher):
    ex = hpclaunch.Executor(site="local", nodes=2, gpus_per_node=2, launcher=launcher)
    job = ex.submit(all_reduce_rank, 2)
    results = job.results()
    assert [r["rank"] for r in results] == [0, 1, 2, 3]
    assert all(r["world"] == 4 and r["sum"] == 20.0 for r in results)  # (1+2+3+4) * 2
    assert sorted(r["local_rank"] for r in results) == [0, 0, 1, 1]
    assert job.result() == results[0]
    # The pickles live in the job's private directory: the directory 0700, each file 0600.
    assert os.stat(job.call_dir).st_mode & 0o777 == 0o700
    for root, _, files in os.walk(job.call_dir):
        for f in files:
            if f.endswith(".pkl"):
                assert os.stat(os.path.join(root, f)).st_mode & 0o777 == 0o600, f


def test_exception_on_rank_3_comes_back_with_its_traceback(workdir):
    ex = hpclaunch.Executor(site="local", nodes=2, gpus_per_node=2)
    job = ex.submit(fail_on_rank_3)
    with pytest.raises(Boom) as e:
        job.result()
    assert e.value.rank == 3 and e.value.host
    assert "rank 3 says no" in str(e.value)
    cause = str(e.value.__cause__)
    assert "rank 3 on host" in cause and "fail_on_rank_3" in cause and "raise Boom" in cause
    assert isinstance(job.exception(), Boom)


def test_an_executor_job_found_again_from_its_id(workdir):
    ex = hpclaunch.Executor(site="local", nodes=1, gpus_per_node=2, launcher="srun")
    job = ex.submit(pow, 2, 10)
    again = hpclaunch.ExecutorJob.find(job.id)
    assert again.dir == job.dir and again.results() == [1024, 1024]
    plain = hpclaunch.submit("true", site="local")
    with pytest.raises(hpclaunch.HpclaunchError) as e:
        hpclaunch.ExecutorJob.find(plain.dir)
    assert e.value.exit_code == 2 and "not a job of hpclaunch.Executor" in e.value.message


# What a submitit user tries first.

def print_and_exit_on_rank_1(code):
    print(f"rank {os.environ['RANK']} here", flush=True)
    if os.environ["RANK"] == "1":
        print("rank 1 is about to die", flush=True)
        os._exit(code)
    return int(os.environ["RANK"])


def kill_rank_1():
    import signal

    if os.environ["RANK"] == "1":
        os.kill(os.getpid(), signal.SIGKILL)
    return 0


def environment():
    env = hpclaunch.JobEnvironment()
    print(f"hello from rank {env.global_rank}")
    import sys

    print(f"a warning from rank {env.global_rank}", file=sys.stderr)
    return (env.global_rank, env.local_rank, env.num_tasks, env.node, env.num_nodes, env.job_id, env.hostname)


def array_place(_):
    env = hpclaunch.JobEnvironment()
    return env.job_id, env.array_job_id, env.array_task_id, env.raw_job_id


def test_submit_returns_at_once_and_the_job_can_be_cancelled(workdir):
    import time

    ex = hpclaunch.Executor(site="local", nodes=1, gpus_per_node=1, launcher="srun")
    job = ex.submit(time.sleep, 300)
    # Returned while the job runs (a blocking submit would return after it ended: completed).
    assert job.state() in ("pending", "running")
    job.cancel()
    with pytest.raises(hpclaunch.JobFailedError) as e:
        job.result()
    assert "cancelled" in e.value.message
    # A command's job too.
    plain = hpclaunch.submit("sleep 300", site="local")
    assert plain.state() == "running"
    plain.cancel()
    assert plain.wait() == "cancelled"


def test_sys_exit_on_a_rank_is_a_job_error_not_the_callers_exit(workdir):
    import sys

    ex = hpclaunch.Executor(site="local", nodes=1, gpus_per_node=1, launcher="srun")
    job = ex.submit(sys.exit, 3)
    with pytest.raises(hpclaunch.JobFailedError) as e:  # not SystemExit: the caller goes on
        job.result()
    assert "rank 0" in e.value.message and "sys.exit(3)" in e.value.message, e.value.message
    assert e.value.rank == 0 and e.value.returncode == 3
    assert isinstance(job.exception(), hpclaunch.JobFailedError)


def test_a_crashed_rank_is_named_with_its_host_exit_code_and_last_lines(workdir):
    ex = hpclaunch.Executor(site="local", nodes=1, gpus_per_node=2, launcher="srun")
    job = ex.submit(print_and_exit_on_rank_1, 7)
    with pytest.raises(hpclaunch.JobFailedError) as e:
        job.result()
    msg = e.value.message
    assert "rank 1 on host" in msg and "exited with code 7" in msg and "rank 1 is about to die" in msg, msg
    assert e.value.rank == 1 and e.value.returncode == 7 and e.value.host
    assert "rank 1 is about to die" in e.value.output_tail
    job = ex.submit(kill_rank_1)
    with pytest.raises(hpclaunch.JobFailedError) as e:
        job.result()
    assert "rank 1" in e.value.message and "signal 9 (SIGKILL)" in e.value.message, e.value.message
    assert e.value.signal == 9


def test_a_failed_submit_leaves_nothing_and_says_why_once(workdir):
    import threading

    ex = hpclaunch.Executor(site="nosuch", nodes=1)
    with pytest.raises(hpclaunch.HpclaunchError) as e:
        ex.submit(print, "hi")
    assert e.value.exit_code == 2 and "nosuch" in e.value.message
    assert not os.path.exists("hpclaunch-jobs"), os.listdir("hpclaunch-jobs")
    lock = threading.Lock()
    ex = hpclaunch.Executor(site="local", nodes=1, gpus_per_node=1)
    with pytest.raises(hpclaunch.HpclaunchError) as e:
        ex.submit(lambda: lock.acquire())
    assert e.value.exit_code == 2 and "cannot pickle" in e.value.message and "lock" in e.value.message
    assert e.value.message.startswith("hpclaunch: error:") and "fix:" in e.value.message
    assert not os.path.exists("hpclaunch-jobs"), os.listdir("hpclaunch-jobs")


def test_map_array_takes_iterables_as_map_does(workdir):
    ex = hpclaunch.Executor(site="local", nodes=1, gpus_per_node=1, launcher="srun")
    jobs = ex.map_array(pow, [2, 3], [2, 2])
    assert len({j.id for j in jobs}) == 1  # one array job
    assert [j.result() for j in jobs] == [4, 9]
    jobs = ex.map_array(pow, [2, 3, 4], [3, 3, 3], max_concurrent=2)
    assert [j.result() for j in jobs] == [8, 27, 64]
    # Each task's JobEnvironment names it as its ExecutorJob does (the launcher's HPCLAUNCH_ARRAY_* variables).
    jobs = ex.map_array(array_place, [0, 1])
    assert [j.result() for j in jobs] == [(j.job_id, j.id, j.task, j.id) for j in jobs]


def test_submitit_api_job_id_stdout_paths_environment(workdir):
    ex = hpclaunch.Executor(site="local", nodes=2, gpus_per_node=2, launcher="agent")
    job = ex.submit(environment)
    assert job.job_id == job.id
    results = job.results()
    assert [r[:5] for r in results] == [(0, 0, 4, 0, 2), (1, 1, 4, 0, 2), (2, 0, 4, 1, 2), (3, 1, 4, 1, 2)]
    assert all(r[5] == job.job_id for r in results)
    assert [r[6] for r in results] == ["node0", "node0", "node1", "node1"]
    assert job.stdout() == "hello from rank 0\n" and job.stdout(rank=3) == "hello from rank 3\n"
    assert job.stderr(rank=2) == "a warning from rank 2\n"
    paths = job.paths
    assert paths.folder == job.call_dir and os.path.isfile(paths.submitted_pickle)
    assert os.path.isfile(paths.result_pickle) and open(paths.stdout).read() == job.stdout()
    assert paths.submission_file == os.path.join(job.dir, "job.sh")
    with pytest.raises(RuntimeError):
        hpclaunch.JobEnvironment()  # not in a job


def test_batch_and_as_completed(workdir, monkeypatch):
    ex = hpclaunch.Executor(site="local", nodes=1, gpus_per_node=1, launcher="srun")
    with ex.batch():
        jobs = [ex.submit(pow, b, 2) for b in (2, 3, 4)]
        with pytest.raises(hpclaunch.HpclaunchError):
            jobs[0].result()  # not submitted before the block ends
    assert len({j.id for j in jobs}) == 1 and [j.job_id for j in jobs] == [f"{jobs[0].id}_{i}" for i in range(3)]
    # The real binary behind a script that writes down each command line: as_completed asks about all the jobs
    # left in one `hpclaunch status`, not one per job.
    calls = workdir / "calls"
    wrapper = workdir / "hpclaunch-logged"
    wrapper.write_text(f'#!/bin/sh\necho "$*" >> {calls}\nexec {hpclaunch.binary()} "$@"\n')
    wrapper.chmod(0o755)
    monkeypatch.setenv("HPCLAUNCH", str(wrapper))
    done = list(hpclaunch.helpers.as_completed(jobs, poll_interval=0.1))
    status = [line.split() for line in calls.read_text().splitlines() if line.startswith("status")]
    assert status and status[0] == ["status", "--json"] + [j.job_id for j in jobs], status
    assert sorted(j.result() for j in done) == [4, 9, 16]
    assert sorted(j.task for j in done) == [0, 1, 2]


def test_result_prints_nothing_for_a_finished_job(workdir, capsys):
    import tqdm  # noqa: F401  (python3-tqdm, scripts/install-deps.sh: the bar is what this checks)

    ex = hpclaunch.Executor(site="local", nodes=1, gpus_per_node=1, launcher="srun")
    job = ex.submit(pow, 2, 5)
    capsys.readouterr()
    assert job.result() == 32
    assert job.result() == 32
    assert job.wait() == "completed"  # wait's own bar: none for a job that had ended
    err = capsys.readouterr().err
    assert "step" not in err and "COMPLETED" not in err, err
