// The local site's in-job face: what `hpclaunch local-srun` sets for each task it starts (docs/CONTRACTS.md), read
// as dialect/in_job.h asks. Its nodes are names on this one machine.
#include <fmt/core.h>

#include <numeric>

#include "dialect/hostlist.h"
#include "dialect/in_job.h"
#include "schedulers/local/dialect.h"
#include "util/strings.h"

namespace hpclaunch {

namespace {

class LocalJobFace final : public InJobFace {
 public:
  const char* name() const override { return "local"; }
  // HPCLAUNCH_LOCAL_JOB set and not "0" or empty: the task was started by `hpclaunch local-srun`.
  bool inside(const Env& env) const override {
    auto marker = env_get(env, "HPCLAUNCH_LOCAL_JOB");
    return marker && !marker->empty() && *marker != "0";
  }
  std::string job_id(const Env& env) const override { return env_get(env, "HPCLAUNCH_JOB_ID").value_or(""); }
  // The local runner's job id is the array's already; each task's index is HPCLAUNCH_ARRAY_TASK, the runtime's.
  std::optional<JobArrayTask> array_task(const Env&) const override { return std::nullopt; }
  std::vector<std::string> job_nodes(const Env& env, const FileReader&) const override {
    auto list = env_get(env, "HPCLAUNCH_NODELIST");
    if (!list) throw Error("HPCLAUNCH_NODELIST", "not set, but this is an hpclaunch local task", k_launcher_fix);
    return expand_hostlist(*list, "HPCLAUNCH_NODELIST");
  }
  std::optional<int> node_count(const Env& env) const override { return lenient_count(env, "HPCLAUNCH_NNODES"); }
  std::optional<int> node_rank(const Env& env) const override { return lenient_count(env, "HPCLAUNCH_NODE_RANK"); }
  std::string node_name(const Env& env) const override { return env_get(env, "HPCLAUNCH_NODENAME").value_or(""); }
  std::optional<std::string> gpu_list(const Env& env) const override {
    auto v = env_get(env, "HPCLAUNCH_GPUS");
    return v && !v->empty() ? v : std::nullopt;
  }
  std::optional<int> gpu_count(const Env& env) const override {
    auto v = env_get(env, "HPCLAUNCH_GPUS");
    return v ? std::optional<int>(count_device_list(*v)) : std::nullopt;
  }
  // The local runner runs the script again when it exits 99 (backend_job.h), and counts the runs here.
  int restart_count(const Env& env) const override { return lenient_count(env, "HPCLAUNCH_RESTART_COUNT").value_or(0); }
  // `local-srun` by hand, without the local profile's exports: its node names do not resolve and all its nodes
  // are this machine.
  std::optional<std::string> default_master_addr(const Env&) const override { return "127.0.0.1"; }
  std::optional<TaskRanks> launcher_ranks(const Env& env) const override;
  // local-srun starts every task; the job's own script is no task.
  TaskRanks batch_ranks(const Env& env, const FileReader&) const override { return *launcher_ranks(env); }
};

std::optional<TaskRanks> LocalJobFace::launcher_ranks(const Env& env) const {
  if (!inside(env)) return std::nullopt;
  const char* source = "an hpclaunch local task";
  TaskRanks r;
  r.source = {RankKind::runner, "hpclaunch-local"};
  r.rank = require_rank_int(env, "HPCLAUNCH_TASK_RANK", 0, source);
  r.world_size = require_rank_int(env, "HPCLAUNCH_NTASKS", 1, source);
  r.local_rank = require_rank_int(env, "HPCLAUNCH_TASK_LOCAL_RANK", 0, source);
  r.node_rank = require_rank_int(env, "HPCLAUNCH_NODE_RANK", 0, source);
  r.num_nodes = require_rank_int(env, "HPCLAUNCH_NNODES", 1, source);
  r.job_id = job_id(env);
  auto spec = env_get(env, "HPCLAUNCH_TASKS_PER_NODE");
  if (!spec) throw Error("HPCLAUNCH_TASKS_PER_NODE", "not set, but this is an hpclaunch local task", k_launcher_fix);
  std::vector<int> per_node = expand_tasks_per_node(*spec, "HPCLAUNCH_TASKS_PER_NODE");
  if (per_node.size() == 1) per_node.assign(static_cast<size_t>(r.num_nodes), per_node[0]);
  if (per_node.size() != static_cast<size_t>(r.num_nodes))
    throw inconsistent_ranks(source, fmt::format("HPCLAUNCH_TASKS_PER_NODE={} does not list HPCLAUNCH_NNODES={} nodes",
                                                 *spec, r.num_nodes));
  if (r.node_rank >= r.num_nodes)
    throw inconsistent_ranks(source, fmt::format("HPCLAUNCH_NODE_RANK={} is not below HPCLAUNCH_NNODES={}", r.node_rank,
                                                 r.num_nodes));
  r.local_world_size = per_node[static_cast<size_t>(r.node_rank)];
  int total = std::accumulate(per_node.begin(), per_node.end(), 0);
  if (total != r.world_size)
    throw inconsistent_ranks(source, fmt::format("HPCLAUNCH_TASKS_PER_NODE={} adds up to {}, not HPCLAUNCH_NTASKS={}",
                                                 *spec, total, r.world_size));
  check_task_ranks(r, source, "HPCLAUNCH_TASK_RANK", "HPCLAUNCH_NTASKS", "HPCLAUNCH_TASK_LOCAL_RANK",
                   "HPCLAUNCH_TASKS_PER_NODE");
  int first = std::accumulate(per_node.begin(), per_node.begin() + r.node_rank, 0);
  if (r.rank != first + r.local_rank)
    throw inconsistent_ranks(source, fmt::format("HPCLAUNCH_TASK_RANK={} is not node {}'s first rank {} + local rank {}",
                                                 r.rank, r.node_rank, first, r.local_rank));
  return r;
}

}  // namespace

const InJobFace& LocalDialect::in_job() const {
  static const LocalJobFace face;
  return face;
}

const SchedulerDialect& local_dialect() {
  static const LocalDialect dialect;
  return dialect;
}

}  // namespace hpclaunch
