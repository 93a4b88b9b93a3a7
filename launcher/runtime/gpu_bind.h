// Which GPU a task sees in direct launch (one task per GPU): `local-rank` gives the task its entry of the
// GPU list the scheduler gave the node, in its vendor's variables (site/accelerator.h); `none` leaves them as they are.
#pragma once
#include <optional>
#include <string>
#include <string_view>

#include "site/accelerator.h"
#include "site/job_rules.h"
#include "util/environment.h"

namespace hpclaunch {

GpuBind parse_gpu_bind(std::string_view s, std::string_view where);  // "none" | "local-rank"
// HPCLAUNCH_GPU_BIND, default none.
GpuBind gpu_bind_from_env(const Env& env);

// The node's GPU list, in the order the scheduler gave it: the vendor's variables (CUDA_VISIBLE_DEVICES;
// ROCR_VISIBLE_DEVICES, HIP_VISIBLE_DEVICES; ZE_AFFINITY_MASK), else the job's face's
// (InJobFace::gpu_list: SLURM_STEP_GPUS, SLURM_JOB_GPUS, HPCLAUNCH_GPUS). nullopt if none is set.
std::optional<std::string> node_gpu_list(const Env& env);

// True when the scheduler already gave each task its own GPUs, so local-rank must not index into the task's
// list (InJobFace::gpus_bound_per_task: Slurm's --gpus-per-task or --gpu-bind).
bool gpus_bound_per_task(const Env& env);

// This task's device, an entry of the node's list (bound_device_env writes it in the vendor's variables), or nullopt
// to leave them alone (bind == none, or gpus_bound_per_task with one device left to the task). Where the vendor numbers a node's devices itself and
// no list is given (Level Zero under PALS), the local rank. Throws
// hpclaunch::Error if local-rank is asked and there is no list, or the list is shorter than local_rank + 1.
std::optional<std::string> bind_gpu(GpuBind bind, const Env& env, int local_rank);

// The variables of a worker that sees only its own GPU (the agent's --virtual-local-rank): entry `local_rank` of the
// devices `env` lists in its vendor's variables (HPCLAUNCH_ACCELERATOR), or the local rank itself where none are
// listed, written by bound_device_env. Throws hpclaunch::Error (--virtual-local-rank) when the list is shorter.
std::vector<std::pair<std::string, std::string>> worker_device_env(const Env& env, int local_rank);

}  // namespace hpclaunch
