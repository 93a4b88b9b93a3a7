// Slurm's in-job face: what sbatch and srun set in a job's environment (sbatch(1), srun(1) "OUTPUT ENVIRONMENT
// VARIABLES"), read as dialect/in_job.h asks.
#include <fmt/core.h>

#include <numeric>

#include "dialect/hostlist.h"
#include "dialect/in_job.h"
#include "schedulers/slurm/dialect.h"
#include "site/accelerator.h"
#include "util/strings.h"

namespace hpclaunch {

namespace {

std::vector<int> tasks_per_node(const Env& env, int num_nodes, std::string_view source) {
  for (const char* name : {"SLURM_STEP_TASKS_PER_NODE", "SLURM_TASKS_PER_NODE"}) {
    if (auto spec = env_get(env, name)) return expand_tasks_per_node(*spec, name);
  }
  throw Error("SLURM_STEP_TASKS_PER_NODE",
              fmt::format("not set (nor SLURM_TASKS_PER_NODE), but this is {} of {} nodes", source, num_nodes),
              k_launcher_fix);
}

// A task started by srun (SLURM_STEP_ID set).
std::optional<TaskRanks> ranks_from_slurm_step(const Env& env) {
  if (!env_has(env, "SLURM_STEP_ID") && !env_has(env, "SLURM_STEPID")) return std::nullopt;
  const char* source = "a Slurm task";
  TaskRanks r;
  r.source = {RankKind::step, "slurm"};
  r.rank = require_rank_int(env, "SLURM_PROCID", 0, source);
  r.local_rank = require_rank_int(env, "SLURM_LOCALID", 0, source);
  r.node_rank = require_rank_int(env, "SLURM_NODEID", 0, source);
  const char* ntasks_var = env_has(env, "SLURM_STEP_NUM_TASKS") ? "SLURM_STEP_NUM_TASKS" : "SLURM_NTASKS";
  r.world_size = require_rank_int(env, ntasks_var, 1, source);
  const char* nnodes_var = env_has(env, "SLURM_STEP_NUM_NODES") ? "SLURM_STEP_NUM_NODES" : "SLURM_NNODES";
  r.num_nodes = require_rank_int(env, nnodes_var, 1, source);
  std::vector<int> per_node = tasks_per_node(env, r.num_nodes, source);
  if (per_node.size() != static_cast<size_t>(r.num_nodes))
    throw inconsistent_ranks(source, fmt::format("the tasks-per-node list has {} entries but {}={}", per_node.size(),
                                                 nnodes_var, r.num_nodes));
  if (r.node_rank >= r.num_nodes)
    throw inconsistent_ranks(source, fmt::format("SLURM_NODEID={} is not below {}={}", r.node_rank, nnodes_var, r.num_nodes));
  int total = std::accumulate(per_node.begin(), per_node.end(), 0);
  if (total != r.world_size)
    throw inconsistent_ranks(source, fmt::format("tasks per node add up to {}, not {}={}", total, ntasks_var, r.world_size));
  r.local_world_size = per_node[static_cast<size_t>(r.node_rank)];
  check_task_ranks(r, source, "SLURM_PROCID", ntasks_var, "SLURM_LOCALID", "SLURM_STEP_TASKS_PER_NODE");
  if (auto list = env_get(env, "SLURM_STEP_NODELIST")) {
    std::vector<std::string> nodes = expand_hostlist(*list, "SLURM_STEP_NODELIST");
    if (nodes.size() != static_cast<size_t>(r.num_nodes))
      throw inconsistent_ranks(source, fmt::format("SLURM_STEP_NODELIST={} names {} nodes but {}={}", *list,
                                                   nodes.size(), nnodes_var, r.num_nodes));
    auto name = env_get(env, "SLURMD_NODENAME");
    if (name && *name != nodes[static_cast<size_t>(r.node_rank)])
      throw inconsistent_ranks(source, fmt::format("SLURMD_NODENAME={} but SLURM_NODEID={} is {} in SLURM_STEP_NODELIST={}",
                                                   *name, r.node_rank, nodes[static_cast<size_t>(r.node_rank)], *list));
  }
  r.job_id = env_get(env, "SLURM_JOB_ID").value_or(env_get(env, "SLURM_JOBID").value_or(""));
  return r;
}

class SlurmJobFace final : public InJobFace {
 public:
  const char* name() const override { return "slurm"; }
  bool inside(const Env& env) const override { return !job_id(env).empty(); }
  std::string job_id(const Env& env) const override {
    return env_non_empty(env, "SLURM_JOB_ID").value_or(env_non_empty(env, "SLURM_JOBID").value_or(""));
  }
  std::optional<JobArrayTask> array_task(const Env& env) const override {
    auto array = env_non_empty(env, "SLURM_ARRAY_JOB_ID");
    auto index = lenient_count(env, "SLURM_ARRAY_TASK_ID");
    if (!array || !index) return std::nullopt;
    return JobArrayTask{*array, *index};
  }
  std::vector<std::string> job_nodes(const Env& env, const FileReader&) const override {
    for (const char* name : {"SLURM_JOB_NODELIST", "SLURM_NODELIST"})
      if (auto list = env_get(env, name)) return expand_hostlist(*list, name);
    return {};
  }
  std::vector<std::string> step_nodes(const Env& env, const FileReader& read_file) const override {
    // Under Open MPI's mpirun in a Slurm job, the ranks on the other nodes are children of an orted that mpirun
    // started with `srun --nodelist=THAT_NODE`: their SLURM_STEP_NODELIST names that node alone, not mpirun's
    // world, which spans the job's nodes with rank 0 on the first (where the batch step runs mpirun). Found on the
    // netns test cluster, where each node is a host of its own: on loopback the wrong MASTER_ADDR (n2) reached rank
    // 0's store all the same.
    if (!env_has(env, "OMPI_COMM_WORLD_SIZE"))
      if (auto list = env_get(env, "SLURM_STEP_NODELIST")) return expand_hostlist(*list, "SLURM_STEP_NODELIST");
    return job_nodes(env, read_file);
  }
  std::optional<int> node_count(const Env& env) const override {
    if (auto n = lenient_count(env, "SLURM_NNODES")) return n;
    return lenient_count(env, "SLURM_JOB_NUM_NODES");
  }
  std::optional<int> node_rank(const Env& env) const override { return lenient_count(env, "SLURM_NODEID"); }
  std::string node_name(const Env& env) const override { return env_non_empty(env, "SLURMD_NODENAME").value_or(""); }
  int restart_count(const Env& env) const override {
    return static_cast<int>(env_int(env, "SLURM_RESTART_COUNT", 0, 1000000).value_or(0));
  }
  std::optional<std::string> gpu_list(const Env& env) const override {
    if (auto v = env_non_empty(env, "SLURM_STEP_GPUS")) return v;
    return env_non_empty(env, "SLURM_JOB_GPUS");
  }
  // SLURM_GPUS_ON_NODE is a count; SLURM_GPUS_PER_NODE may be "4" or "a100:4".
  std::optional<int> gpu_count(const Env& env) const override {
    if (auto n = lenient_count(env, "SLURM_GPUS_ON_NODE")) return n;
    if (auto s = env_non_empty(env, "SLURM_GPUS_PER_NODE")) {
      long long v = 0;
      auto parts = split(*s, ':');
      if (parse_int(parts.back(), &v)) return static_cast<int>(v);
    }
    if (auto s = visible_device_list(env, device_visibility(accelerator_from_env(env)))) return count_device_list(*s);
    return std::nullopt;
  }
  // slurmd binds per task under srun --gpus-per-task or --gpu-bind and says so in SLURMD_TRES_BIND
  // ("gpu:per_task:1"); SLURM_GPUS_PER_TASK is set when the job itself asked --gpus-per-task.
  bool gpus_bound_per_task(const Env& env) const override {
    return env_get(env, "SLURMD_TRES_BIND").value_or("").find("gpu:") != std::string::npos ||
           env_get(env, "SLURM_GPUS_PER_TASK").value_or("") != "";
  }
  // srun delivers a signal to every process of its step, the agent's workers included.
  bool step_signals_workers(const Env& env) const override {
    return env_has(env, "SLURM_STEP_ID") || env_has(env, "SLURM_STEPID");
  }
  // srun's own PMI (--mpi=pmi2) repeats SLURM_PROCID; Hydra (mpiexec) started by srun has its own numbering, and
  // then its PMI_RANK is the task's rank (mpi_in_job.h), not srun's.
  std::optional<TaskRanks> launcher_ranks(const Env& env) const override {
    auto r = ranks_from_slurm_step(env);
    if (!r || (!env_has(env, "PMI_RANK") && !env_has(env, "PMI_SIZE"))) return r;
    auto pmi_rank = optional_rank_int(env, "PMI_RANK", 0), pmi_size = optional_rank_int(env, "PMI_SIZE", 1);
    if (pmi_rank == r->rank && pmi_size == r->world_size) return r;
    return std::nullopt;
  }
  TaskRanks batch_ranks(const Env& env, const FileReader&) const override {
    TaskRanks r;
    r.source = {RankKind::batch, "slurm-batch"};
    r.job_id = job_id(env);
    int ntasks = optional_rank_int(env, "SLURM_NTASKS", 1).value_or(1);
    int nnodes = optional_rank_int(env, "SLURM_JOB_NUM_NODES", 1).value_or(optional_rank_int(env, "SLURM_NNODES", 1).value_or(1));
    if (ntasks > 1 || nnodes > 1)
      throw Error("SLURM_STEP_ID",
                  fmt::format("not set: this is the batch script of Slurm job {} ({} tasks on {} nodes), not one of "
                              "its tasks, so it has no rank",
                              r.job_id, ntasks, nnodes),
                  "start it with `srun hpclaunch exec -- CMD` (or mpirun) so every task gets its rank");
    r.note = fmt::format("the batch script of Slurm job {} with one task: a world of one", r.job_id);
    return r;
  }
};

}  // namespace

const InJobFace& SlurmDialect::in_job() const {
  static const SlurmJobFace face;
  return face;
}

}  // namespace hpclaunch
