#include "agent/job_environment.h"

#include "runtime/ranks.h"

namespace hpclaunch {

JobEnvironment read_job_environment(const EnvMap& env, const RuntimeRules& rules) {
  // Which job this is, and its id, by the runtime's reading (runtime/ranks.h): the same for `exec` and `agent`.
  JobEnvironment job;
  const InJobFace* face = job_face(env);
  if (!face) return job;
  job.source = face->name();
  job.job_id = job_id(env);
  job.nnodes = face->node_count(env);
  job.node_rank = face->node_rank(env);
  job.node_name = face->node_name(env);
  job.gpus = face->gpu_count(env);
  if (!job.node_rank) {
    // The scheduler does not say which node this is (PBS): the script starts one agent per node with mpirun
    // (--map-by ppr:1:node), whose rank is then the node's.
    if (auto r = launcher_ranks(env)) {
      job.node_rank = r->rank;
      if (!job.nnodes) job.nnodes = r->world_size;
    }
  }
  if (rules.master_addr) job.master_addr = rules.master_addr(env);
  if (rules.rendezvous_port) job.rendezvous_port = rules.rendezvous_port(env, job.job_id);
  return job;
}

}  // namespace hpclaunch
