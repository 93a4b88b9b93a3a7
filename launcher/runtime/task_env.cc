// One task's torch variables from its rank source, the rendezvous rules and the GPU binding.
#include "runtime/task_env.h"

#include <fmt/core.h>

namespace hpclaunch {

namespace {

// Every rank of this MPI launch is on this host: Open MPI, PMI or PALS says the local size is the world size.
bool one_host_launch(const TaskRanks& r) {
  return r.source.kind == RankKind::mpi && r.local_world_size == r.world_size;
}

// The profile's rule has what it needs: a fixed address, or the node list it takes the first node of.
bool rule_has_a_host(const Env& env, const TaskEnvEffects& effects) {
  MasterAddrPolicy policy = master_addr_policy_from_env(env);
  if (policy.rule == MasterAddrRule::fixed) return true;
  return !(policy.rule == MasterAddrRule::first_node ? step_nodes(env, effects.read_file, effects.run)
                                                     : job_nodes(env, effects.read_file, effects.run))
              .empty();
}

}  // namespace

TaskEnv compute_task_env(const Env& env, const TaskEnvOptions& options, const TaskEnvEffects& effects) {
  TaskEnv out;
  out.ranks = detect_task_ranks(env, effects.read_file);
  const TaskRanks& r = out.ranks;
  if (!r.note.empty()) out.notes.push_back(r.note);

  std::string addr;
  bool given = env_get(env, "MASTER_ADDR").value_or("") != "" || options.master_addr;
  if (r.source.kind == RankKind::shell && !given) {
    addr = "127.0.0.1";  // a world of one talks only to itself
  } else if (!given && one_host_launch(r) && !rule_has_a_host(env, effects)) {
    // `mpirun -np N` on one machine: no node list, but the launcher says every rank is here. A multi-host launch
    // without a node list or MASTER_ADDR stays an error (master_addr_by_rule's).
    addr = "127.0.0.1";
    if (r.rank == 0)
      out.notes.push_back(fmt::format("MASTER_ADDR=127.0.0.1: {} puts all {} ranks on this host and no node list "
                                      "names another (export MASTER_ADDR to choose one)",
                                      r.source.name, r.world_size));
  } else {
    addr = master_addr_from_env(env, options.master_addr, effects.read_file, effects.resolve, effects.run);
  }
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
  // (torchrun's --virtual-local-rank); the rank on the node stays in HPCLAUNCH_NODE_LOCAL_RANK. So does a task
  // Slurm bound itself (--gpus-per-task=1 --gpu-bind=closest): its local rank would index devices it cannot see.
  const bool slurm_bound = bind == GpuBind::local_rank && !gpu && gpus_bound_per_task(env);
  set("LOCAL_RANK", gpu || slurm_bound ? "0" : std::to_string(r.local_rank));
  if (gpu || slurm_bound) set("HPCLAUNCH_NODE_LOCAL_RANK", std::to_string(r.local_rank));
  set("WORLD_SIZE", std::to_string(r.world_size));
  set("LOCAL_WORLD_SIZE", std::to_string(r.local_world_size));
  if (r.node_rank >= 0 && r.num_nodes > 0) {
    set("GROUP_RANK", std::to_string(r.node_rank));
    set("GROUP_WORLD_SIZE", std::to_string(r.num_nodes));
  } else {
    out.notes.push_back(fmt::format("GROUP_RANK/GROUP_WORLD_SIZE not set: {} gives no node index and its ranks are "
                                    "not placed in equal blocks per node (use --map-by slot)",
                                    r.source.name));
  }
  set("MASTER_ADDR", addr);
  set("MASTER_PORT", std::to_string(port));
  const DeviceVisibility& vis = device_visibility(accelerator_from_env(env));
  if (gpu)
    for (auto& [name, value] : bound_device_env(vis, *gpu)) out.vars.emplace_back(name, value);
  for (auto& [name, value] : neutral_job_vars(env, r.node_rank)) set(name.c_str(), std::move(value));
  if (slurm_bound)
    out.notes.push_back(fmt::format("Slurm bound each task's GPUs itself (--gpus-per-task or --gpu-bind): {}={} kept, "
                                    "LOCAL_RANK=0",
                                    vis.bind_variable, visible_device_list(env, vis).value_or("")));
  return out;
}

}  // namespace hpclaunch
