// MPI launchers' rank sources, read as a whole: a launcher that is present but incomplete or self-contradictory is
// an error, because the silent alternative (a world of one per task) hangs or splits the job far from the cause.
#include "dialect/mpi_in_job.h"

#include <fmt/core.h>

#include "util/error.h"
#include "util/strings.h"

namespace hpclaunch {

namespace {

// Open MPI exports --map-by as OMPI_MCA_rmaps_base_mapping_policy ("node", "slot", "socket:span", ":OVERSUBSCRIBE").
Placement open_mpi_placement(const Env& env) {
  const std::string policy = ascii_lower(env_get(env, "OMPI_MCA_rmaps_base_mapping_policy").value_or(""));
  std::string base = policy.substr(0, policy.find(':'));
  if (base == "node") return Placement::round_robin;
  if (base == "seq" || base == "rankfile" || policy.find("span") != std::string::npos) return Placement::unknown;
  return Placement::block;
}

}  // namespace

std::optional<TaskRanks> ranks_from_open_mpi(const Env& env) {
  bool present = false;
  for (const char* name : {"OMPI_COMM_WORLD_RANK", "OMPI_COMM_WORLD_SIZE", "OMPI_COMM_WORLD_LOCAL_RANK",
                           "OMPI_COMM_WORLD_LOCAL_SIZE"})
    present = present || env_has(env, name);
  if (!present) return std::nullopt;
  const char* source = "an Open MPI task";
  TaskRanks r;
  r.source = {RankKind::mpi, "open-mpi"};
  r.rank = require_rank_int(env, "OMPI_COMM_WORLD_RANK", 0, source);
  r.world_size = require_rank_int(env, "OMPI_COMM_WORLD_SIZE", 1, source);
  r.local_rank = require_rank_int(env, "OMPI_COMM_WORLD_LOCAL_RANK", 0, source);
  r.local_world_size = require_rank_int(env, "OMPI_COMM_WORLD_LOCAL_SIZE", 1, source);
  check_task_ranks(r, source, "OMPI_COMM_WORLD_RANK", "OMPI_COMM_WORLD_SIZE", "OMPI_COMM_WORLD_LOCAL_RANK",
                   "OMPI_COMM_WORLD_LOCAL_SIZE");
  // OMPI_COMM_WORLD_NODE_RANK is the rank among all jobs' processes on the node, not the node's index.
  derive_node_rank(&r, optional_rank_int(env, "OMPI_MCA_orte_num_nodes", 1), open_mpi_placement(env));
  r.job_id = env_get(env, "OMPI_MCA_ess_base_jobid").value_or("");
  return r;
}

std::optional<TaskRanks> ranks_from_pmi(const Env& env) {
  if (!env_has(env, "PMI_RANK") && !env_has(env, "PMI_SIZE")) return std::nullopt;
  const char* source = "an MPICH/PMI task";
  TaskRanks r;
  r.source = {RankKind::mpi, "pmi"};
  r.rank = require_rank_int(env, "PMI_RANK", 0, source);
  r.world_size = require_rank_int(env, "PMI_SIZE", 1, source);
  // Hydra sets MPI_LOCALRANKID/MPI_LOCALNRANKS; Cray PMI sets PMI_LOCAL_RANK/PMI_LOCAL_SIZE.
  const char* local_var = env_has(env, "MPI_LOCALRANKID") ? "MPI_LOCALRANKID" : "PMI_LOCAL_RANK";
  const char* local_size_var = env_has(env, "MPI_LOCALNRANKS") ? "MPI_LOCALNRANKS" : "PMI_LOCAL_SIZE";
  if (!env_has(env, local_var) || !env_has(env, local_size_var))
    throw Error("PMI_RANK", "set, but neither MPI_LOCALRANKID/MPI_LOCALNRANKS (Hydra) nor "
                "PMI_LOCAL_RANK/PMI_LOCAL_SIZE (Cray PMI) tells the task's local rank",
                "pass --gpu-bind none and set LOCAL_RANK yourself, or use a launcher that sets them");
  r.local_rank = require_rank_int(env, local_var, 0, source);
  r.local_world_size = require_rank_int(env, local_size_var, 1, source);
  check_task_ranks(r, source, "PMI_RANK", "PMI_SIZE", local_var, local_size_var);
  derive_node_rank(&r, std::nullopt, Placement::block);
  r.job_id = env_get(env, "PMI_JOBID").value_or("");
  return r;
}

std::string mpi_job_id(const Env& env) {
  for (const char* name : {"OMPI_MCA_ess_base_jobid", "PALS_APID"})
    if (auto id = env_get(env, name); id && !id->empty()) return *id;
  return "";
}

}  // namespace hpclaunch
