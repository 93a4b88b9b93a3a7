#include "agent/job_environment.h"

#include "runtime/ranks.h"
#include "util/strings.h"

namespace hpclaunch {

namespace {

const std::string* get(const EnvMap& env, const char* name) {
  auto it = env.find(name);
  return it == env.end() || it->second.empty() ? nullptr : &it->second;
}

std::optional<int> get_int(const EnvMap& env, const char* name) {
  long long v = 0;
  const std::string* s = get(env, name);
  if (!s || !parse_int(trim(*s), &v)) return std::nullopt;
  return static_cast<int>(v);
}

// SLURM_GPUS_ON_NODE is a count; SLURM_GPUS_PER_NODE may be "4" or "a100:4".
std::optional<int> slurm_gpus(const EnvMap& env) {
  if (auto n = get_int(env, "SLURM_GPUS_ON_NODE")) return n;
  if (const std::string* s = get(env, "SLURM_GPUS_PER_NODE")) {
    long long v = 0;
    auto parts = split(*s, ':');
    if (parse_int(parts.back(), &v)) return static_cast<int>(v);
  }
  if (const std::string* s = get(env, "CUDA_VISIBLE_DEVICES")) return count_device_list(*s);
  return std::nullopt;
}

}  // namespace

int count_device_list(const std::string& list) {
  int n = 0;
  for (const auto& id : split(list, ',')) {
    auto t = trim(id);
    if (!t.empty() && t != "NoDevFiles") ++n;
  }
  return n;
}

JobEnvironment read_job_environment(const EnvMap& env, const RuntimeRules& rules) {
  // Which job this is, and its id, by the runtime's reading (runtime/ranks.h): the same for `exec` and `agent`.
  JobEnvironment job;
  job.job_id = job_id(env);
  if (is_local_job(env)) {
    job.source = "local";
    job.nnodes = get_int(env, "HPCLAUNCH_NNODES");
    job.node_rank = get_int(env, "HPCLAUNCH_NODE_RANK");
    if (auto s = get(env, "HPCLAUNCH_NODENAME")) job.node_name = *s;
    if (auto s = get(env, "HPCLAUNCH_GPUS")) job.gpus = count_device_list(*s);
  } else if (get(env, "SLURM_JOB_ID") || get(env, "SLURM_JOBID")) {
    job.source = "slurm";
    job.nnodes = get_int(env, "SLURM_NNODES");
    if (!job.nnodes) job.nnodes = get_int(env, "SLURM_JOB_NUM_NODES");
    job.node_rank = get_int(env, "SLURM_NODEID");
    if (auto s = get(env, "SLURMD_NODENAME")) job.node_name = *s;
    job.gpus = slurm_gpus(env);
  } else {
    job.job_id.clear();
    return job;
  }
  if (rules.master_addr) job.master_addr = rules.master_addr(env);
  if (rules.rendezvous_port) job.rendezvous_port = rules.rendezvous_port(env, job.job_id);
  return job;
}

}  // namespace hpclaunch
