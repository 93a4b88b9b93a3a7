// What the allocation tells the agent, so that `hpclaunch agent -- CMD` needs no flags inside a job: the job's face
// (dialect/in_job.h: Slurm, PBS, hpclaunch's local emulation) and, where the scheduler does not say which node this
// is (PBS), the MPI launcher that started one agent per node. The node-list and port rules are the runtime's
// (launcher/runtime/), passed in as RuntimeRules so this stays pure.
#pragma once
#include <functional>
#include <optional>
#include <string>

#include "agent/worker_env.h"
#include "dialect/in_job.h"

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
  std::string source;  // the face's name ("slurm", "pbs", "local") or "" (none)
  std::optional<int> nnodes;
  std::optional<int> node_rank;
  std::string job_id;
  std::string node_name;
  std::optional<int> gpus;  // GPUs given to this node
  std::string master_addr;  // the rendezvous host
  int rendezvous_port = 0;
};

JobEnvironment read_job_environment(const EnvMap& env, const RuntimeRules& rules);


}  // namespace hpclaunch
