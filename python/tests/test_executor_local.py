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
