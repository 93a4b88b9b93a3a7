// GPU binding for direct launch.
#include "runtime/gpu_bind.h"

#include <fmt/core.h>

#include "dialect/in_job.h"
#include "util/enum_names.h"
#include "util/error.h"
#include "util/strings.h"

namespace hpclaunch {

GpuBind parse_gpu_bind(std::string_view s, std::string_view where) {
  if (auto bind = value_of(k_gpu_bind_names, s)) return *bind;
  throw Error(std::string(where),
              fmt::format("unknown GPU binding '{}'{}", s, did_you_mean(s, names_of(k_gpu_bind_names))),
              "use none or local-rank");
}

GpuBind gpu_bind_from_env(const Env& env) {
  auto v = env_get(env, "HPCLAUNCH_GPU_BIND");
  return v && !v->empty() ? parse_gpu_bind(*v, "HPCLAUNCH_GPU_BIND") : GpuBind::none;
}

std::optional<std::string> node_gpu_list(const Env& env) {
  if (auto v = visible_device_list(env, device_visibility(accelerator_from_env(env)))) return *v;
  const InJobFace* face = job_face(env);
  return face ? face->gpu_list(env) : std::nullopt;
}

bool gpus_bound_per_task(const Env& env) {
  const InJobFace* face = job_face(env);
  return face && face->gpus_bound_per_task(env);
}

std::optional<std::string> bind_gpu(GpuBind bind, const Env& env, int local_rank) {
  if (bind == GpuBind::none) return std::nullopt;
  const DeviceVisibility& vis = device_visibility(accelerator_from_env(env));
  auto list = node_gpu_list(env);
  // Slurm's own per-task binding is kept when it left the task one device. `--gpu-bind=closest` on a node whose
  // GPUs name no cores gives every task all the GPUs near it (the test cluster: "2,3" to both tasks), and then the
  // task still takes its own entry, or two ranks would share device 0.
  if (gpus_bound_per_task(env) && (!list || split(*list, ',').size() <= 1)) return std::nullopt;
  if (!list && vis.numbered_by_default && local_rank >= 0) return std::to_string(local_rank);
  if (!list)
    throw Error("--gpu-bind local-rank",
                "no GPU list to pick from (" + join(vis.list_variables, ", ") +
                    ", SLURM_STEP_GPUS, SLURM_JOB_GPUS, HPCLAUNCH_GPUS are unset)",
                "request GPUs (--gpus-per-node / --gres=gpu:N), export " + vis.bind_variable +
                    "=0,1,2,3, or use --gpu-bind none");
  std::vector<std::string> gpus = split(*list, ',');
  for (auto& g : gpus) g = std::string(trim(g));
  if (local_rank < 0 || static_cast<size_t>(local_rank) >= gpus.size())
    throw Error("--gpu-bind local-rank",
                fmt::format("local rank {} has no GPU: the node's list '{}' has {}", local_rank, *list, gpus.size()),
                "start at most one task per GPU on a node (--ntasks-per-node), or use --gpu-bind none");
  if (gpus[static_cast<size_t>(local_rank)].empty())
    throw Error("--gpu-bind local-rank", fmt::format("the node's GPU list '{}' has an empty entry", *list),
                "fix " + vis.list_variables.front());
  return gpus[static_cast<size_t>(local_rank)];
}

std::vector<std::pair<std::string, std::string>> worker_device_env(const Env& env, int local_rank) {
  const DeviceVisibility& vis = device_visibility(accelerator_from_env(env));
  auto list = visible_device_list(env, vis);
  if (!list) return bound_device_env(vis, std::to_string(local_rank));
  std::vector<std::string> devices = split(*list, ',');
  if (local_rank < 0 || local_rank >= static_cast<int>(devices.size()))
    throw Error("--virtual-local-rank", fmt::format("local rank {} but {} lists {} device(s)", local_rank,
                                                    vis.list_variables.front(), devices.size()),
                "start at most that many workers per node (--nproc-per-node)");
  return bound_device_env(vis, std::string(trim(devices[static_cast<size_t>(local_rank)])));
}

}  // namespace hpclaunch
