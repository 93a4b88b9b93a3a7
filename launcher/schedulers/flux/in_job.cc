// Flux's in-job face: what a Flux job's environment says (flux-environment(7), JOB ENVIRONMENT and INITIAL PROGRAM
// ENVIRONMENT; flux-core doc/man1/common/job-environment-variables.rst), read as dialect/in_job.h asks.
// Flux says less than Slurm: a batch script (an instance's initial program) has FLUX_URI and FLUX_ENCLOSING_ID
// (the batch job's id) but none of FLUX_JOB_ID, FLUX_JOB_SIZE, FLUX_JOB_NNODES, FLUX_TASK_*, and no variable names
// the nodes of a job or of a task, so they come from `flux hostlist local`; a `flux run` task has FLUX_JOB_ID (the
// step's own id, not the batch job's), FLUX_TASK_RANK, FLUX_TASK_LOCAL_ID, FLUX_JOB_SIZE and FLUX_JOB_NNODES.
// Flux requeues nothing and hpclaunch asks it for no warning signal.
#include <fmt/core.h>

#include "dialect/in_job.h"
#include "schedulers/flux/dialect.h"
#include "util/strings.h"

namespace hpclaunch {

namespace {

// A task started by `flux run`: FLUX_TASK_RANK, FLUX_TASK_LOCAL_ID, FLUX_JOB_SIZE, FLUX_JOB_NNODES. Flux names no
// per-node task count; LLNL's launcher takes FLUX_JOB_SIZE / FLUX_JOB_NNODES (LBANN/HPC-launcher
// hpc_launcher/schedulers/flux.py), which holds when every node runs as many, as hpclaunch's `flux run` lines ask;
// the tasks are mapped in blocks (flux-run(1) --taskmap; block is the default), so a node's first rank is
// rank - local rank.
std::optional<TaskRanks> ranks_from_flux_run(const Env& env) {
  if (!env_has(env, "FLUX_TASK_RANK")) return std::nullopt;
  const char* source = "a Flux task";
  TaskRanks r;
  r.source = {RankKind::step, "flux"};
  r.rank = require_rank_int(env, "FLUX_TASK_RANK", 0, source);
  r.local_rank = require_rank_int(env, "FLUX_TASK_LOCAL_ID", 0, source);
  r.world_size = require_rank_int(env, "FLUX_JOB_SIZE", 1, source);
  const int nodes = require_rank_int(env, "FLUX_JOB_NNODES", 1, source);
  if (nodes > r.world_size || r.world_size % nodes != 0)
    throw Error("FLUX_JOB_SIZE",
                fmt::format("{} tasks on FLUX_JOB_NNODES={} nodes are not the same number on each node, so a task's "
                            "local world size is unknown",
                            r.world_size, nodes),
                "start the same number of tasks on every node (flux run -N NODES -n NODES*K)");
  r.local_world_size = r.world_size / nodes;
  check_task_ranks(r, source, "FLUX_TASK_RANK", "FLUX_JOB_SIZE", "FLUX_TASK_LOCAL_ID", "FLUX_JOB_SIZE/FLUX_JOB_NNODES");
  derive_node_rank(&r, nodes, Placement::block);
  if (r.node_rank < 0)
    throw inconsistent_ranks(source, fmt::format("FLUX_TASK_RANK={} with FLUX_TASK_LOCAL_ID={} is not where a block "
                                                 "mapping of {} per node puts it (--taskmap=cyclic?)",
                                                 r.rank, r.local_rank, r.local_world_size));
  r.job_id = env_get(env, "FLUX_JOB_ID").value_or("");
  return r;
}

class FluxJobFace final : public InJobFace {
 public:
  const char* name() const override { return "flux"; }
  bool inside(const Env& env) const override { return !job_id(env).empty(); }
  // The batch job's id: FLUX_ENCLOSING_ID in its script and in its steps' tasks (they inherit it); FLUX_JOB_ID in a
  // task of a job run straight from the system instance, which is the job itself.
  std::string job_id(const Env& env) const override {
    return env_non_empty(env, "FLUX_ENCLOSING_ID").value_or(env_non_empty(env, "FLUX_JOB_ID").value_or(""));
  }
  std::optional<JobArrayTask> array_task(const Env&) const override { return std::nullopt; }  // no arrays
  std::vector<std::string> job_nodes(const Env&, const FileReader&) const override { return {}; }
  // `local`: the job FLUX_JOB_ID names (a task's step), else the instance (the batch job, in its script)
  // (flux-hostlist(1), SOURCES). It prints an RFC 29 hostlist, "node[0-1]", read by the default parse_node_list.
  std::vector<std::string> node_list_command(const Env&) const override { return {"flux", "hostlist", "local"}; }
  // Where only the launcher knows (the agents are one `flux run` task per node): the ranks tell.
  std::optional<int> node_count(const Env&) const override { return std::nullopt; }
  std::optional<int> node_rank(const Env&) const override { return std::nullopt; }
  std::string node_name(const Env&) const override { return ""; }
  std::optional<std::string> gpu_list(const Env&) const override { return std::nullopt; }
  // Flux's gpu-affinity sets CUDA_VISIBLE_DEVICES=-1 in a task that has no GPU on its node (flux-shell-options(7),
  // src/shell/gpubind.c): none, not one.
  std::optional<int> gpu_count(const Env& env) const override {
    if (env_get(env, "CUDA_VISIBLE_DEVICES").value_or("") == "-1") return 0;
    return InJobFace::gpu_count(env);
  }
  std::optional<TaskRanks> launcher_ranks(const Env& env) const override { return ranks_from_flux_run(env); }
  // The script names no size of its own; `hpclaunch exec` in it, not under flux run, is one process.
  TaskRanks batch_ranks(const Env& env, const FileReader&) const override {
    TaskRanks r;
    r.source = {RankKind::batch, "flux-batch"};
    r.job_id = job_id(env);
    r.note = fmt::format("the batch script of Flux job {}, not a task of `flux run`: a world of one", r.job_id);
    return r;
  }
};

}  // namespace

const InJobFace& FluxDialect::in_job() const {
  static const FluxJobFace face;
  return face;
}

}  // namespace hpclaunch
