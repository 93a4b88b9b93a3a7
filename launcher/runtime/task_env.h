// The variables `hpclaunch env` prints and `hpclaunch exec` sets for one task: RANK, LOCAL_RANK, WORLD_SIZE,
// LOCAL_WORLD_SIZE, GROUP_RANK, GROUP_WORLD_SIZE, MASTER_ADDR, MASTER_PORT (torch's env:// names) and,
// with --gpu-bind local-rank, the vendor's visibility variables (site/accelerator.h). Pure: the effects come in through
// TaskEnvEffects.
#pragma once
#include <optional>
#include <string>
#include <utility>
#include <vector>

#include "util/environment.h"
#include "runtime/gpu_bind.h"
#include "runtime/ranks.h"
#include "runtime/rendezvous.h"

namespace hpclaunch {

struct TaskEnvOptions {
  std::optional<std::string> master_addr;  // --master-addr
  std::optional<int> master_port;          // --master-port
  std::optional<GpuBind> gpu_bind;         // --gpu-bind; unset: HPCLAUNCH_GPU_BIND
};

struct TaskEnvEffects {
  FileReader read_file;
  Resolver resolve;
  CommandReader run;  // for a scheduler whose nodes only a command names (dialect/in_job.h's node_list_command)
};

struct TaskEnv {
  TaskRanks ranks;
  std::vector<std::pair<std::string, std::string>> vars;  // in a fixed order, to set or print
  std::vector<std::string> notes;                         // for stderr
};

TaskEnv compute_task_env(const Env& env, const TaskEnvOptions& options, const TaskEnvEffects& effects);

}  // namespace hpclaunch
