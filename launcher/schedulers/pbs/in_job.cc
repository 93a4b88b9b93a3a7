// PBS Pro's in-job face (OpenPBS 23.06 observed, /work/shared/TEST-CLUSTER.md; NCI Gadi, ALCF Polaris), with Cray
// PALS, PBS's own launcher: what a PBS job's environment says, read as dialect/in_job.h asks. PBS says less than
// Slurm inside a job: no node index or count for a task (mpirun's ranks tell them), no GPU list of its own (its
// cgroup hook sets CUDA_VISIBLE_DEVICES), no warning signal and no requeue that leaves nodes out.
#include <fmt/core.h>

#include <set>

#include "dialect/in_job.h"
#include "schedulers/pbs/dialect.h"
#include "util/strings.h"

namespace hpclaunch {

namespace {

std::string read_pbs_nodefile(const FileReader& read_file, const std::string& path) {
  try {
    return read_file(path);
  } catch (const Error& e) {
    throw failure("PBS_NODEFILE", e.what(),
                  "it exists only on the job's first host: export MASTER_ADDR there and pass it on (mpirun -x)");
  }
}

// A task started by Cray PALS's mpiexec: PALS_RANKID, PALS_LOCAL_RANKID, PALS_NODEID (and PMI_SIZE).
std::optional<TaskRanks> ranks_from_pals(const Env& env) {
  if (!env_has(env, "PALS_RANKID")) return std::nullopt;
  const char* source = "a Cray PALS task";
  TaskRanks r;
  r.source = {RankKind::mpi, "pals"};
  r.rank = require_rank_int(env, "PALS_RANKID", 0, source);
  r.local_rank = require_rank_int(env, "PALS_LOCAL_RANKID", 0, source);
  r.world_size = require_rank_int(env, "PMI_SIZE", 1, source);
  const char* local_size_var = env_has(env, "PALS_LOCAL_SIZE") ? "PALS_LOCAL_SIZE" : "PMI_LOCAL_SIZE";
  r.local_world_size = require_rank_int(env, local_size_var, 1, source);
  check_task_ranks(r, source, "PALS_RANKID", "PMI_SIZE", "PALS_LOCAL_RANKID", local_size_var);
  if (auto pmi_rank = optional_rank_int(env, "PMI_RANK", 0); pmi_rank && *pmi_rank != r.rank)
    throw inconsistent_ranks(source, fmt::format("PALS_RANKID={} but PMI_RANK={}", r.rank, *pmi_rank));
  derive_node_rank(&r, std::nullopt, Placement::block);
  if (auto node = optional_rank_int(env, "PALS_NODEID", 0)) r.node_rank = *node;
  if (r.num_nodes > 0 && r.node_rank >= r.num_nodes) r.num_nodes = -1;
  r.job_id = env_get(env, "PALS_APID").value_or("");
  return r;
}

class PbsJobFace final : public InJobFace {
 public:
  const char* name() const override { return "pbs"; }
  bool inside(const Env& env) const override { return !job_id(env).empty(); }
  std::string job_id(const Env& env) const override { return env_get(env, "PBS_JOBID").value_or(""); }
  // PBS_ARRAY_ID "4242[].server": the same leading number as each task's PBS_JOBID "4242[7].server".
  std::optional<JobArrayTask> array_task(const Env& env) const override {
    auto array = env_get(env, "PBS_ARRAY_ID");
    auto index = env_get(env, "PBS_ARRAY_INDEX");
    long long i = 0;
    if (!array || array->empty() || !index || !parse_int(*index, &i) || i < 0) return std::nullopt;
    return JobArrayTask{*array, static_cast<int>(i)};
  }
  std::vector<std::string> job_nodes(const Env& env, const FileReader& read_file) const override {
    auto nodefile = env_get(env, "PBS_NODEFILE");
    if (!nodefile) return {};
    std::vector<std::string> hosts = parse_pbs_nodefile(read_pbs_nodefile(read_file, *nodefile));
    if (hosts.empty()) throw Error("PBS_NODEFILE", fmt::format("'{}' lists no host", *nodefile), "check the job's select");
    return hosts;
  }
  std::optional<int> node_count(const Env&) const override { return std::nullopt; }
  std::optional<int> node_rank(const Env&) const override { return std::nullopt; }
  std::string node_name(const Env&) const override { return ""; }
  std::optional<std::string> gpu_list(const Env&) const override { return std::nullopt; }
  std::optional<TaskRanks> launcher_ranks(const Env& env) const override { return ranks_from_pals(env); }
  TaskRanks batch_ranks(const Env& env, const FileReader& read_file) const override {
    TaskRanks r;
    r.source = {RankKind::batch, "pbs-batch"};
    r.job_id = job_id(env);
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
                              slots, r.job_id),
                  "start it with `mpirun --hostfile $PBS_NODEFILE ... hpclaunch exec -- CMD`");
    r.note = fmt::format("the batch script of PBS job {} with one slot: a world of one", r.job_id);
    return r;
  }
};

}  // namespace

std::vector<std::string> parse_pbs_nodefile(std::string_view contents) {
  std::vector<std::string> hosts;
  std::set<std::string, std::less<>> seen;
  for (const std::string& line : split(contents, '\n')) {
    std::string host(trim(line));
    if (!host.empty() && seen.insert(host).second) hosts.push_back(host);
  }
  return hosts;
}

const InJobFace& PbsDialect::in_job() const {
  static const PbsJobFace face;
  return face;
}

}  // namespace hpclaunch
