// Which GPU a task sees in direct launch (one task per GPU): `local-rank` gives the task its entry of the
// GPU list the scheduler gave the node; `none` leaves CUDA_VISIBLE_DEVICES as it is.
#pragma once
#include <optional>
#include <string>
#include <string_view>

#include "site/job_rules.h"
#include "util/environment.h"

namespace hpclaunch {

GpuBind parse_gpu_bind(std::string_view s, std::string_view where);  // "none" | "local-rank"
// HPCLAUNCH_GPU_BIND, default none.
GpuBind gpu_bind_from_env(const Env& env);

// The node's GPU list, in the order the scheduler gave it: CUDA_VISIBLE_DEVICES, else the job's face's
// (InJobFace::gpu_list: SLURM_STEP_GPUS, SLURM_JOB_GPUS, HPCLAUNCH_GPUS). nullopt if none is set.
std::optional<std::string> node_gpu_list(const Env& env);

// True when the scheduler already gave each task its own GPUs, so local-rank must not index into the task's
// list (InJobFace::gpus_bound_per_task: Slurm's --gpus-per-task or --gpu-bind).
bool gpus_bound_per_task(const Env& env);

// The CUDA_VISIBLE_DEVICES value for this task, or nullopt to leave it alone (bind == none, or
// gpus_bound_per_task). Throws
// hpclaunch::Error if local-rank is asked and there is no list, or the list is shorter than local_rank + 1.
std::optional<std::string> bind_gpu(GpuBind bind, const Env& env, int local_rank);

}  // namespace hpclaunch
