// One task's torch variables from its rank source, the rendezvous rules and the GPU binding.
#include "runtime/task_env.h"

#include <fmt/core.h>

namespace hpclaunch {

TaskEnv compute_task_env(const Env& env, const TaskEnvOptions& options, const TaskEnvEffects& effects) {
  TaskEnv out;
  out.ranks = detect_task_ranks(env, effects.read_file);
  const TaskRanks& r = out.ranks;
  if (!r.note.empty()) out.notes.push_back(r.note);

  std::string addr;
  bool given = env_get(env, "MASTER_ADDR").value_or("") != "" || options.master_addr;
  if (r.source == RankSource::shell && !given)
    addr = "127.0.0.1";  // a world of one talks only to itself
  else
    addr = master_addr_from_env(env, options.master_addr, effects.read_file, effects.resolve);
  if (options.master_addr && addr != *options.master_addr)
    out.notes.push_back(fmt::format("MASTER_ADDR={} from the environment wins over --master-addr {}", addr,
                                    *options.master_addr));
  int port = choose_master_port(env, options.master_port, r.job_id);
  if (options.master_port && port != *options.master_port)
    out.notes.push_back(fmt::format("MASTER_PORT={} from the environment wins over --master-port {}", port,
                                    *options.master_port));

  auto set = [&](const char* name, std::string value) { out.vars.emplace_back(name, std::move(value)); };
  set("RANK", std::to_string(r.rank));
  GpuBind bind = options.gpu_bind ? *options.gpu_bind : gpu_bind_from_env(env);
  std::optional<std::string> gpu = bind_gpu(bind, env, r.local_rank);
  // A task bound to one GPU sees it as device 0: LOCAL_RANK 0 keeps `torch.cuda.set_device(local_rank)` right
  // (torchrun's --virtual-local-rank); the rank on the node stays in HPCLAUNCH_NODE_LOCAL_RANK.
  set("LOCAL_RANK", gpu ? "0" : std::to_string(r.local_rank));
  if (gpu) set("HPCLAUNCH_NODE_LOCAL_RANK", std::to_string(r.local_rank));
  set("WORLD_SIZE", std::to_string(r.world_size));
  set("LOCAL_WORLD_SIZE", std::to_string(r.local_world_size));
  if (r.node_rank >= 0 && r.num_nodes > 0) {
    set("GROUP_RANK", std::to_string(r.node_rank));
    set("GROUP_WORLD_SIZE", std::to_string(r.num_nodes));
  } else {
    out.notes.push_back(fmt::format("GROUP_RANK/GROUP_WORLD_SIZE not set: {} gives no node index and its ranks are "
                                    "not placed in equal blocks per node (use --map-by slot)",
                                    rank_source_name(r.source)));
  }
  set("MASTER_ADDR", addr);
  set("MASTER_PORT", std::to_string(port));
  if (gpu) set("CUDA_VISIBLE_DEVICES", *gpu);
  if (bind == GpuBind::local_rank && gpus_bound_per_task(env))
    out.notes.push_back(fmt::format("Slurm bound each task's GPUs itself (--gpus-per-task or --gpu-bind): "
                                    "CUDA_VISIBLE_DEVICES={} kept",
                                    env_get(env, "CUDA_VISIBLE_DEVICES").value_or("")));
  return out;
}

}  // namespace hpclaunch
