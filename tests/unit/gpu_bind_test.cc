#include <doctest/doctest.h>

#include "runtime/gpu_bind.h"
#include "util/error.h"

namespace gpu_bind_test {  // this file's names, apart from its unity batch's others (tests/CMakeLists.txt)

using namespace hpclaunch;

TEST_SUITE_BEGIN("gpu_bind");

TEST_CASE("local-rank picks this task's entry of the list Slurm gave, not its number") {
  Env env = {{"CUDA_VISIBLE_DEVICES", "4,5,6,7"}};
  CHECK(bind_gpu(GpuBind::local_rank, env, 0) == "4");
  CHECK(bind_gpu(GpuBind::local_rank, env, 3) == "7");
  CHECK(bind_gpu(GpuBind::local_rank, {{"SLURM_JOB_ID", "9"}, {"SLURM_STEP_GPUS", "2,3"}}, 1) == "3");
  CHECK(bind_gpu(GpuBind::local_rank, {{"HPCLAUNCH_LOCAL_JOB", "1"}, {"HPCLAUNCH_GPUS", "0,1"}}, 1) == "1");
  // The list is the job's face's: outside the job whose variable it is, no list.
  CHECK_THROWS_AS(bind_gpu(GpuBind::local_rank, {{"SLURM_STEP_GPUS", "2,3"}}, 1), Error);
}

TEST_CASE("with --gpus-per-task Slurm already bound each task: local-rank keeps its list") {
  // Task 1 of `srun --gpus-per-task=1` in a job of --ntasks-per-node=2 --gpus-per-node=4 on the test cluster.
  Env env = {{"CUDA_VISIBLE_DEVICES", "1"}, {"SLURM_STEP_GPUS", "1"}, {"SLURM_JOB_GPUS", "0,1,2,3"},
             {"SLURMD_TRES_BIND", "gpu:per_task:1"}, {"SLURM_JOB_ID", "9"}};
  CHECK(gpus_bound_per_task(env));
  CHECK_FALSE(bind_gpu(GpuBind::local_rank, env, 1).has_value());
  // The job itself asked --gpus-per-task.
  CHECK(gpus_bound_per_task({{"SLURM_JOB_ID", "9"}, {"SLURM_GPUS_PER_TASK", "1"}}));
  CHECK_FALSE(gpus_bound_per_task({{"SLURM_JOB_ID", "9"}, {"SLURM_STEP_GPUS", "0,1,2,3"}}));
  // PBS gives no per-task binding: its cgroup hook's CUDA_VISIBLE_DEVICES is the node's list.
  CHECK_FALSE(gpus_bound_per_task({{"PBS_JOBID", "1.pbs"}, {"CUDA_VISIBLE_DEVICES", "0,1"}}));
}

TEST_CASE("none leaves CUDA_VISIBLE_DEVICES alone") {
  CHECK_FALSE(bind_gpu(GpuBind::none, {{"CUDA_VISIBLE_DEVICES", "0,1"}}, 1).has_value());
  CHECK_FALSE(bind_gpu(GpuBind::none, {}, 5).has_value());
}

TEST_CASE("more tasks than GPUs, or no list, is an error") {
  CHECK_THROWS_WITH_AS(bind_gpu(GpuBind::local_rank, {{"CUDA_VISIBLE_DEVICES", "0,1"}}, 2),
                       "--gpu-bind local-rank: local rank 2 has no GPU: the node's list '0,1' has 2; start at most "
                       "one task per GPU on a node (--ntasks-per-node), or use --gpu-bind none",
                       Error);
  CHECK_THROWS_AS(bind_gpu(GpuBind::local_rank, {}, 0), Error);
}

TEST_CASE("the binding is parsed strictly, with a suggestion") {
  CHECK(parse_gpu_bind("local-rank", "--gpu-bind") == GpuBind::local_rank);
  CHECK(gpu_bind_from_env({}) == GpuBind::none);
  CHECK(gpu_bind_from_env({{"HPCLAUNCH_GPU_BIND", "local-rank"}}) == GpuBind::local_rank);
  CHECK_THROWS_WITH_AS(parse_gpu_bind("local_rank", "--gpu-bind"),
                       "--gpu-bind: unknown GPU binding 'local_rank' (did you mean 'local-rank'?); use none or "
                       "local-rank",
                       Error);
}

TEST_SUITE_END();

}  // namespace gpu_bind_test
