// Rank sources. Each launcher's variables are read as a whole: a launcher that is present but incomplete or
// self-contradictory is an error, because the silent alternative (a world of one per task) hangs or splits
// the job far from the cause.
#include "runtime/ranks.h"

#include <fmt/core.h>

#include <numeric>
#include <set>

#include "runtime/hostlist.h"
#include "util/error.h"
#include "util/strings.h"

namespace hpclaunch {

namespace {

constexpr long long k_max_tasks = 10'000'000;
constexpr const char* k_launcher_fix = "start the command through the launcher itself, not in a copied environment";

// `source` is "a Slurm task", "an Open MPI task": the error names it without the article.
Error inconsistent(std::string_view source, const std::string& what) {
  source.remove_prefix(source.starts_with("an ") ? 3 : source.starts_with("a ") ? 2 : 0);
  return Error(std::string(source), what, k_launcher_fix);
}

int get_int(const Env& env, std::string_view name, long long min, std::string_view source) {
  return static_cast<int>(env_require_int(env, name, min, k_max_tasks, source));
}

std::optional<int> opt_int(const Env& env, std::string_view name, long long min) {
  auto v = env_int(env, name, min, k_max_tasks);
  if (!v) return std::nullopt;
  return static_cast<int>(*v);
}

// Checks that hold for every launcher.
void check_ranks(const TaskRanks& r, std::string_view source, std::string_view rank_var,
                 std::string_view size_var, std::string_view local_var, std::string_view local_size_var) {
  if (r.world_size < 1) throw inconsistent(source, fmt::format("{}={} is not a positive size", size_var, r.world_size));
  if (r.rank >= r.world_size)
    throw inconsistent(source, fmt::format("{}={} is not below {}={}", rank_var, r.rank, size_var, r.world_size));
  if (r.local_world_size < 1 || r.local_world_size > r.world_size)
    throw inconsistent(source, fmt::format("{}={} is not in [1, {}={}]", local_size_var, r.local_world_size,
                                           size_var, r.world_size));
  if (r.local_rank >= r.local_world_size)
    throw inconsistent(source, fmt::format("{}={} is not below {}={}", local_var, r.local_rank, local_size_var,
                                           r.local_world_size));
}

// MPI launchers give no node index; it is derived when the placement is known and every node has the same
// number of ranks. Block placement (by slot, core, socket...: a node fills before the next) puts this node's
// first rank at rank - local_rank; round robin (--map-by node) puts rank r on node r mod nodes.
enum class Placement { block, round_robin, unknown };

void derive_node(TaskRanks* r, std::optional<int> num_nodes, Placement placement) {
  int nodes = num_nodes.value_or(r->world_size % r->local_world_size == 0 ? r->world_size / r->local_world_size : -1);
  r->num_nodes = nodes;
  r->node_rank = -1;
  if (nodes <= 0 || nodes * r->local_world_size != r->world_size) return;
  if (placement == Placement::block && (r->rank - r->local_rank) % r->local_world_size == 0)
    r->node_rank = (r->rank - r->local_rank) / r->local_world_size;
  if (placement == Placement::round_robin && r->rank / nodes == r->local_rank) r->node_rank = r->rank % nodes;
}

// Open MPI exports --map-by as OMPI_MCA_rmaps_base_mapping_policy ("node", "slot", "socket:span", ":OVERSUBSCRIBE").
Placement open_mpi_placement(const Env& env) {
  const std::string policy = ascii_lower(env_get(env, "OMPI_MCA_rmaps_base_mapping_policy").value_or(""));
  std::string base = policy.substr(0, policy.find(':'));
  if (base == "node") return Placement::round_robin;
  if (base == "seq" || base == "rankfile" || policy.find("span") != std::string::npos) return Placement::unknown;
  return Placement::block;
}

std::vector<int> tasks_per_node(const Env& env, int num_nodes, std::string_view source) {
  for (const char* name : {"SLURM_STEP_TASKS_PER_NODE", "SLURM_TASKS_PER_NODE"}) {
    if (auto spec = env_get(env, name)) return expand_tasks_per_node(*spec, name);
  }
  throw Error("SLURM_STEP_TASKS_PER_NODE",
              fmt::format("not set (nor SLURM_TASKS_PER_NODE), but this is {} of {} nodes", source, num_nodes),
              k_launcher_fix);
}

std::string read_pbs_nodefile(const FileReader& read_file, const std::string& path) {
  try {
    return read_file(path);
  } catch (const Error& e) {
    throw failure("PBS_NODEFILE", e.what(),
                  "it exists only on the job's first host: export MASTER_ADDR there and pass it on (mpirun -x)");
  }
}

}  // namespace

bool is_local_job(const Env& env) {
  auto marker = env_get(env, "HPCLAUNCH_LOCAL_JOB");
  return marker && !marker->empty() && *marker != "0";
}

const char* rank_source_name(RankSource s) {
  switch (s) {
    case RankSource::local: return "hpclaunch-local";
    case RankSource::open_mpi: return "open-mpi";
    case RankSource::pmi: return "pmi";
    case RankSource::pals: return "pals";
    case RankSource::slurm_step: return "slurm";
    case RankSource::slurm_batch: return "slurm-batch";
    case RankSource::pbs_batch: return "pbs-batch";
    case RankSource::shell: return "shell";
  }
  return "?";
}

std::optional<TaskRanks> ranks_from_local(const Env& env) {
  if (!is_local_job(env)) return std::nullopt;
  const char* source = "an hpclaunch local task";
  TaskRanks r;
  r.source = RankSource::local;
  r.rank = get_int(env, "HPCLAUNCH_TASK_RANK", 0, source);
  r.world_size = get_int(env, "HPCLAUNCH_NTASKS", 1, source);
  r.local_rank = get_int(env, "HPCLAUNCH_TASK_LOCAL_RANK", 0, source);
  r.node_rank = get_int(env, "HPCLAUNCH_NODE_RANK", 0, source);
  r.num_nodes = get_int(env, "HPCLAUNCH_NNODES", 1, source);
  r.job_id = env_get(env, "HPCLAUNCH_JOB_ID").value_or("");
  auto spec = env_get(env, "HPCLAUNCH_TASKS_PER_NODE");
  if (!spec) throw Error("HPCLAUNCH_TASKS_PER_NODE", "not set, but this is an hpclaunch local task", k_launcher_fix);
  std::vector<int> per_node = expand_tasks_per_node(*spec, "HPCLAUNCH_TASKS_PER_NODE");
  if (per_node.size() == 1) per_node.assign(static_cast<size_t>(r.num_nodes), per_node[0]);
  if (per_node.size() != static_cast<size_t>(r.num_nodes))
    throw inconsistent(source, fmt::format("HPCLAUNCH_TASKS_PER_NODE={} does not list HPCLAUNCH_NNODES={} nodes",
                                           *spec, r.num_nodes));
  if (r.node_rank >= r.num_nodes)
    throw inconsistent(source, fmt::format("HPCLAUNCH_NODE_RANK={} is not below HPCLAUNCH_NNODES={}", r.node_rank,
                                           r.num_nodes));
  r.local_world_size = per_node[static_cast<size_t>(r.node_rank)];
  int total = std::accumulate(per_node.begin(), per_node.end(), 0);
  if (total != r.world_size)
    throw inconsistent(source, fmt::format("HPCLAUNCH_TASKS_PER_NODE={} adds up to {}, not HPCLAUNCH_NTASKS={}",
                                           *spec, total, r.world_size));
  check_ranks(r, source, "HPCLAUNCH_TASK_RANK", "HPCLAUNCH_NTASKS", "HPCLAUNCH_TASK_LOCAL_RANK",
              "HPCLAUNCH_TASKS_PER_NODE");
  int first = std::accumulate(per_node.begin(), per_node.begin() + r.node_rank, 0);
  if (r.rank != first + r.local_rank)
    throw inconsistent(source, fmt::format("HPCLAUNCH_TASK_RANK={} is not node {}'s first rank {} + local rank {}",
                                           r.rank, r.node_rank, first, r.local_rank));
  return r;
}

std::optional<TaskRanks> ranks_from_open_mpi(const Env& env) {
  bool present = false;
  for (const char* name : {"OMPI_COMM_WORLD_RANK", "OMPI_COMM_WORLD_SIZE", "OMPI_COMM_WORLD_LOCAL_RANK",
                           "OMPI_COMM_WORLD_LOCAL_SIZE"})
    present = present || env_has(env, name);
  if (!present) return std::nullopt;
  const char* source = "an Open MPI task";
  TaskRanks r;
  r.source = RankSource::open_mpi;
  r.rank = get_int(env, "OMPI_COMM_WORLD_RANK", 0, source);
  r.world_size = get_int(env, "OMPI_COMM_WORLD_SIZE", 1, source);
  r.local_rank = get_int(env, "OMPI_COMM_WORLD_LOCAL_RANK", 0, source);
  r.local_world_size = get_int(env, "OMPI_COMM_WORLD_LOCAL_SIZE", 1, source);
  check_ranks(r, source, "OMPI_COMM_WORLD_RANK", "OMPI_COMM_WORLD_SIZE", "OMPI_COMM_WORLD_LOCAL_RANK",
              "OMPI_COMM_WORLD_LOCAL_SIZE");
  // OMPI_COMM_WORLD_NODE_RANK is the rank among all jobs' processes on the node, not the node's index.
  derive_node(&r, opt_int(env, "OMPI_MCA_orte_num_nodes", 1), open_mpi_placement(env));
  r.job_id = env_get(env, "OMPI_MCA_ess_base_jobid").value_or("");
  return r;
}

std::optional<TaskRanks> ranks_from_pmi(const Env& env) {
  if (!env_has(env, "PMI_RANK") && !env_has(env, "PMI_SIZE")) return std::nullopt;
  const char* source = "an MPICH/PMI task";
  TaskRanks r;
  r.source = RankSource::pmi;
  r.rank = get_int(env, "PMI_RANK", 0, source);
  r.world_size = get_int(env, "PMI_SIZE", 1, source);
  // Hydra sets MPI_LOCALRANKID/MPI_LOCALNRANKS; Cray PMI sets PMI_LOCAL_RANK/PMI_LOCAL_SIZE.
  const char* local_var = env_has(env, "MPI_LOCALRANKID") ? "MPI_LOCALRANKID" : "PMI_LOCAL_RANK";
  const char* local_size_var = env_has(env, "MPI_LOCALNRANKS") ? "MPI_LOCALNRANKS" : "PMI_LOCAL_SIZE";
  if (!env_has(env, local_var) || !env_has(env, local_size_var))
    throw Error("PMI_RANK", "set, but neither MPI_LOCALRANKID/MPI_LOCALNRANKS (Hydra) nor "
                "PMI_LOCAL_RANK/PMI_LOCAL_SIZE (Cray PMI) tells the task's local rank",
                "pass --gpu-bind none and set LOCAL_RANK yourself, or use a launcher that sets them");
  r.local_rank = get_int(env, local_var, 0, source);
  r.local_world_size = get_int(env, local_size_var, 1, source);
  check_ranks(r, source, "PMI_RANK", "PMI_SIZE", local_var, local_size_var);
  derive_node(&r, std::nullopt, Placement::block);
  r.job_id = env_get(env, "PMI_JOBID").value_or("");
  return r;
}

std::optional<TaskRanks> ranks_from_pals(const Env& env) {
  if (!env_has(env, "PALS_RANKID")) return std::nullopt;
  const char* source = "a Cray PALS task";
  TaskRanks r;
  r.source = RankSource::pals;
  r.rank = get_int(env, "PALS_RANKID", 0, source);
  r.local_rank = get_int(env, "PALS_LOCAL_RANKID", 0, source);
  r.world_size = get_int(env, "PMI_SIZE", 1, source);
  const char* local_size_var = env_has(env, "PALS_LOCAL_SIZE") ? "PALS_LOCAL_SIZE" : "PMI_LOCAL_SIZE";
  r.local_world_size = get_int(env, local_size_var, 1, source);
  check_ranks(r, source, "PALS_RANKID", "PMI_SIZE", "PALS_LOCAL_RANKID", local_size_var);
  if (auto pmi_rank = opt_int(env, "PMI_RANK", 0); pmi_rank && *pmi_rank != r.rank)
    throw inconsistent(source, fmt::format("PALS_RANKID={} but PMI_RANK={}", r.rank, *pmi_rank));
  derive_node(&r, std::nullopt, Placement::block);
  if (auto node = opt_int(env, "PALS_NODEID", 0)) r.node_rank = *node;
  if (r.num_nodes > 0 && r.node_rank >= r.num_nodes) r.num_nodes = -1;
  r.job_id = env_get(env, "PALS_APID").value_or("");
  return r;
}

std::optional<TaskRanks> ranks_from_slurm_step(const Env& env) {
  if (!env_has(env, "SLURM_STEP_ID") && !env_has(env, "SLURM_STEPID")) return std::nullopt;
  const char* source = "a Slurm task";
  TaskRanks r;
  r.source = RankSource::slurm_step;
  r.rank = get_int(env, "SLURM_PROCID", 0, source);
  r.local_rank = get_int(env, "SLURM_LOCALID", 0, source);
  r.node_rank = get_int(env, "SLURM_NODEID", 0, source);
  const char* ntasks_var = env_has(env, "SLURM_STEP_NUM_TASKS") ? "SLURM_STEP_NUM_TASKS" : "SLURM_NTASKS";
  r.world_size = get_int(env, ntasks_var, 1, source);
  const char* nnodes_var = env_has(env, "SLURM_STEP_NUM_NODES") ? "SLURM_STEP_NUM_NODES" : "SLURM_NNODES";
  r.num_nodes = get_int(env, nnodes_var, 1, source);
  std::vector<int> per_node = tasks_per_node(env, r.num_nodes, source);
  if (per_node.size() != static_cast<size_t>(r.num_nodes))
    throw inconsistent(source, fmt::format("the tasks-per-node list has {} entries but {}={}", per_node.size(),
                                           nnodes_var, r.num_nodes));
  if (r.node_rank >= r.num_nodes)
    throw inconsistent(source, fmt::format("SLURM_NODEID={} is not below {}={}", r.node_rank, nnodes_var, r.num_nodes));
  int total = std::accumulate(per_node.begin(), per_node.end(), 0);
  if (total != r.world_size)
    throw inconsistent(source, fmt::format("tasks per node add up to {}, not {}={}", total, ntasks_var, r.world_size));
  r.local_world_size = per_node[static_cast<size_t>(r.node_rank)];
  check_ranks(r, source, "SLURM_PROCID", ntasks_var, "SLURM_LOCALID", "SLURM_STEP_TASKS_PER_NODE");
  if (auto list = env_get(env, "SLURM_STEP_NODELIST")) {
    std::vector<std::string> nodes = expand_hostlist(*list, "SLURM_STEP_NODELIST");
    if (nodes.size() != static_cast<size_t>(r.num_nodes))
      throw inconsistent(source, fmt::format("SLURM_STEP_NODELIST={} names {} nodes but {}={}", *list, nodes.size(),
                                             nnodes_var, r.num_nodes));
    auto name = env_get(env, "SLURMD_NODENAME");
    if (name && *name != nodes[static_cast<size_t>(r.node_rank)])
      throw inconsistent(source, fmt::format("SLURMD_NODENAME={} but SLURM_NODEID={} is {} in SLURM_STEP_NODELIST={}",
                                             *name, r.node_rank, nodes[static_cast<size_t>(r.node_rank)], *list));
  }
  r.job_id = env_get(env, "SLURM_JOB_ID").value_or(env_get(env, "SLURM_JOBID").value_or(""));
  return r;
}

std::optional<TaskRanks> ranks_from_batch(const Env& env, const FileReader& read_file) {
  TaskRanks r;  // a world of one, if the job has one slot
  if (auto id = env_get(env, "SLURM_JOB_ID")) {
    r.source = RankSource::slurm_batch;
    r.job_id = *id;
    int ntasks = opt_int(env, "SLURM_NTASKS", 1).value_or(1);
    int nnodes = opt_int(env, "SLURM_JOB_NUM_NODES", 1).value_or(opt_int(env, "SLURM_NNODES", 1).value_or(1));
    if (ntasks > 1 || nnodes > 1)
      throw Error("SLURM_STEP_ID",
                  fmt::format("not set: this is the batch script of Slurm job {} ({} tasks on {} nodes), not one of "
                              "its tasks, so it has no rank",
                              *id, ntasks, nnodes),
                  "start it with `srun hpclaunch exec -- CMD` (or mpirun) so every task gets its rank");
    r.note = fmt::format("the batch script of Slurm job {} with one task: a world of one", *id);
    return r;
  }
  if (auto id = env_get(env, "PBS_JOBID")) {
    r.source = RankSource::pbs_batch;
    r.job_id = *id;
    size_t slots = 1;
    if (auto nodefile = env_get(env, "PBS_NODEFILE")) {
      slots = 0;
      for (const std::string& line : split(read_pbs_nodefile(read_file, *nodefile), '\n'))
        slots += trim(line).empty() ? 0 : 1;
    }
    if (slots > 1)
      throw Error("PBS_NODEFILE",
                  fmt::format("lists {} MPI slots: this is the batch script of PBS job {}, not one of its tasks, so "
                              "it has no rank",
                              slots, *id),
                  "start it with `mpirun --hostfile $PBS_NODEFILE ... hpclaunch exec -- CMD`");
    r.note = fmt::format("the batch script of PBS job {} with one slot: a world of one", *id);
    return r;
  }
  return std::nullopt;
}

TaskRanks detect_task_ranks(const Env& env, const FileReader& read_file) {
  std::optional<TaskRanks> r = ranks_from_local(env);
  if (!r) r = ranks_from_open_mpi(env);
  if (!r) r = ranks_from_pals(env);
  if (!r && (env_has(env, "PMI_RANK") || env_has(env, "PMI_SIZE"))) {
    // srun's own PMI (--mpi=pmi2) repeats SLURM_PROCID; Hydra started by srun has its own numbering.
    auto slurm = ranks_from_slurm_step(env);
    auto pmi_rank = opt_int(env, "PMI_RANK", 0), pmi_size = opt_int(env, "PMI_SIZE", 1);
    if (slurm && pmi_rank == slurm->rank && pmi_size == slurm->world_size)
      r = slurm;
    else
      r = ranks_from_pmi(env);
  }
  if (!r) r = ranks_from_slurm_step(env);
  if (!r) r = ranks_from_batch(env, read_file);
  if (!r) {
    r = TaskRanks{};
    r->note = "not inside srun, mpirun or a batch job: a world of one (RANK=0, WORLD_SIZE=1)";
  }
  if (r->source != RankSource::local) {
    std::string scheduler_id = job_id(env);  // the scheduler's id names the job better than mpirun's
    if (!scheduler_id.empty()) r->job_id = scheduler_id;
  }
  return *r;
}

std::vector<std::string> parse_pbs_nodefile(std::string_view contents) {
  std::vector<std::string> hosts;
  std::set<std::string, std::less<>> seen;
  for (const std::string& line : split(contents, '\n')) {
    std::string host(trim(line));
    if (!host.empty() && seen.insert(host).second) hosts.push_back(host);
  }
  return hosts;
}

std::vector<std::string> job_nodes(const Env& env, const FileReader& read_file) {
  if (is_local_job(env)) {
    auto list = env_get(env, "HPCLAUNCH_NODELIST");
    if (!list) throw Error("HPCLAUNCH_NODELIST", "not set, but this is an hpclaunch local task", k_launcher_fix);
    return expand_hostlist(*list, "HPCLAUNCH_NODELIST");
  }
  for (const char* name : {"SLURM_JOB_NODELIST", "SLURM_NODELIST"})
    if (auto list = env_get(env, name)) return expand_hostlist(*list, name);
  if (auto nodefile = env_get(env, "PBS_NODEFILE")) {
    std::vector<std::string> hosts = parse_pbs_nodefile(read_pbs_nodefile(read_file, *nodefile));
    if (hosts.empty()) throw Error("PBS_NODEFILE", fmt::format("'{}' lists no host", *nodefile), "check the job's select");
    return hosts;
  }
  return {};
}

std::vector<std::string> step_nodes(const Env& env, const FileReader& read_file) {
  // Under Open MPI's mpirun in a Slurm job, the ranks on the other nodes are children of an orted that mpirun
  // started with `srun --nodelist=THAT_NODE`: their SLURM_STEP_NODELIST names that node alone, not mpirun's world,
  // which spans the job's nodes with rank 0 on the first (where the batch step runs mpirun). Found on the netns
  // test cluster (issue 14 §1): on loopback the wrong MASTER_ADDR (n2) reached rank 0's store all the same.
  if (!is_local_job(env) && !env_has(env, "OMPI_COMM_WORLD_SIZE"))
    if (auto list = env_get(env, "SLURM_STEP_NODELIST")) return expand_hostlist(*list, "SLURM_STEP_NODELIST");
  return job_nodes(env, read_file);
}

std::string job_id(const Env& env) {
  if (is_local_job(env)) return env_get(env, "HPCLAUNCH_JOB_ID").value_or("");
  for (const char* name : {"SLURM_JOB_ID", "SLURM_JOBID", "PBS_JOBID", "OMPI_MCA_ess_base_jobid", "PALS_APID"})
    if (auto id = env_get(env, name); id && !id->empty()) return *id;
  return "";
}

}  // namespace hpclaunch
