// What the allocation tells the agent (Slurm, or hpclaunch's local emulation, docs/CONTRACTS.md), so that
// `hpclaunch agent -- CMD` needs no flags inside a job. The node-list and port rules are the runtime's
// (launcher/runtime/), passed in as RuntimeRules so this stays pure.
#pragma once
#include <functional>
#include <optional>
#include <string>

#include "agent/worker_env.h"

namespace hpclaunch {

struct RuntimeRules {
  // MASTER_ADDR for the job by the site's rule (first node, batch host, fixed); "" if it cannot tell.
  std::function<std::string(const EnvMap& env)> master_addr;
  // The job's rendezvous port (HPCLAUNCH_MASTER_PORT, or derived from the job id).
  std::function<int(const EnvMap& env, const std::string& job_id)> rendezvous_port;
};

// The rules of launcher/runtime/ (job_runtime.cc).
RuntimeRules runtime_rules();

struct JobEnvironment {
  std::string source;  // "slurm", "local" or "" (none)
  std::optional<int> nnodes;
  std::optional<int> node_rank;
  std::string job_id;
  std::string node_name;
  std::optional<int> gpus;  // GPUs given to this node
  std::string master_addr;  // the rendezvous host
  int rendezvous_port = 0;
};

JobEnvironment read_job_environment(const EnvMap& env, const RuntimeRules& rules);

// How many ids a CUDA_VISIBLE_DEVICES-like list names ("0,1,3" → 3, "" → 0, "NoDevFiles" → 0).
int count_device_list(const std::string& list);

}  // namespace hpclaunch
