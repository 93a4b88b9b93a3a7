#include "agent/worker_env.h"

#include <fmt/core.h>

#include <algorithm>

#include "runtime/gpu_bind.h"
#include "util/command.h"  // signal_name
#include "util/error.h"
#include "util/strings.h"

namespace hpclaunch {

EnvMap worker_env(const EnvMap& base, const WorkerLayout& layout, const Assignment& a, int local_rank,
                  const std::string& error_file) {
  EnvMap env = base;
  std::string rank = std::to_string(a.rank_offset + local_rank);
  std::string world = std::to_string(a.world_size);
  env["LOCAL_RANK"] = std::to_string(local_rank);
  if (layout.virtual_local_rank) {
    // Each worker sees only its own device, in its vendor's variables (HPCLAUNCH_ACCELERATOR: CUDA_VISIBLE_DEVICES,
    // ROCR_VISIBLE_DEVICES, ZE_AFFINITY_MASK), as `hpclaunch exec` binds a task (runtime/gpu_bind.h).
    env["LOCAL_RANK"] = "0";
    // As exec's bound task: the rank on the node, which also tells `hpclaunch check` that this worker's variables
    // name its own device and not the node's.
    env["HPCLAUNCH_NODE_LOCAL_RANK"] = std::to_string(local_rank);
    for (auto& [name, value] : worker_device_env(base, local_rank)) env[name] = value;
  }
  env["RANK"] = rank;
  env["GROUP_RANK"] = std::to_string(a.group_rank);
  env["ROLE_RANK"] = rank;
  env["ROLE_NAME"] = layout.role;
  env["LOCAL_WORLD_SIZE"] = std::to_string(layout.local_world_size);
  env["WORLD_SIZE"] = world;
  env["GROUP_WORLD_SIZE"] = std::to_string(a.group_world_size);
  env["ROLE_WORLD_SIZE"] = world;
  env["MASTER_ADDR"] = a.master_addr;
  env["MASTER_PORT"] = std::to_string(a.master_port);
  env["TORCHELASTIC_RESTART_COUNT"] = std::to_string(a.restart_count);
  env["TORCHELASTIC_MAX_RESTARTS"] = std::to_string(layout.max_restarts);
  env["TORCHELASTIC_RUN_ID"] = layout.run_id;
  // torchrun 2.x says True: its workers are TCPStore clients of the agent's store. Ours speaks the agents' sealed
  // protocol, not TCPStore's, so a worker told True would wait for a server no one runs: rank 0 serves its own.
  env["TORCHELASTIC_USE_AGENT_STORE"] = "False";
  env["TORCHELASTIC_ERROR_FILE"] = error_file;
  if (!layout.signals.empty()) {
    std::vector<std::string> names;
    for (int sig : layout.signals) names.push_back(signal_name(sig));
    env["TORCHELASTIC_SIGNALS_TO_HANDLE"] = join(names, ",");
  }
  env.emplace("TORCH_NCCL_ASYNC_ERROR_HANDLING", "1");
  env.emplace("OMP_NUM_THREADS", std::to_string(layout.omp_threads));
  env.emplace("PYTHONUNBUFFERED", "1");
  if (!layout.use_libuv) env.emplace("USE_LIBUV", "0");  // torch.distributed's env:// store then takes no libuv
  if (!layout.flight_recorder_prefix.empty()) {
    // NCCL's own account of a hang (torch's flight recorder): the last collectives of each rank, dumped when the
    // process group's watchdog sees a timeout. Costs a ring buffer of entries; a CPU (gloo) job ignores it.
    // torch 2.15's names, each unless the user set it or its older TORCH_NCCL_ name.
    const std::pair<const char*, const char*> names[] = {{"TORCH_FR_BUFFER_SIZE", "TORCH_NCCL_TRACE_BUFFER_SIZE"},
                                                         {"TORCH_FR_DUMP_ON_TIMEOUT", "TORCH_NCCL_DUMP_ON_TIMEOUT"},
                                                         {"TORCH_FR_DUMP_TEMP_FILE", "TORCH_NCCL_DEBUG_INFO_TEMP_FILE"}};
    const std::string values[] = {"2000", "1", layout.flight_recorder_prefix};
    for (size_t i = 0; i < 3; ++i)
      if (!env.count(names[i].first) && !env.count(names[i].second)) env[names[i].first] = values[i];
  }
  return env;
}

namespace {

bool ends_with(const std::string& s, const std::string& suffix) {
  return s.size() >= suffix.size() && s.compare(s.size() - suffix.size(), suffix.size(), suffix) == 0;
}

}  // namespace

std::vector<std::string> worker_argv(const WorkerCommand& c) {
  if (c.args.empty()) return {};
  std::vector<std::string> argv;
  if (c.module) {
    argv = {c.python, "-u", "-m"};
  } else if (!c.no_python && (c.always_python || ends_with(c.args[0], ".py"))) {
    argv = {c.python, "-u"};
  }
  argv.insert(argv.end(), c.args.begin(), c.args.end());
  return argv;
}

int omp_threads_per_worker(int cores, int local_world_size) {
  return std::max(1, cores / std::max(1, local_world_size));
}

}  // namespace hpclaunch
