// Rank sources in order, and the job's nodes and id: each asked of the faces in dialect/, which read the variables.
#include "runtime/ranks.h"

#include "dialect/dialect.h"
#include "dialect/mpi_in_job.h"

namespace hpclaunch {

std::optional<TaskRanks> launcher_ranks(const Env& env) {
  // Innermost first (all_dialects): a launcher that runs inside anything (local-srun) first; then Open MPI, whose
  // orteds may be srun tasks (SLURM_STEP_ID set); then the schedulers' own launchers, innermost first; Cray PALS
  // and srun --mpi=pmi2 set PMI_RANK too, so they go before Hydra's PMI.
  const std::vector<const SchedulerDialect*> dialects = all_dialects();
  for (const SchedulerDialect* d : dialects)
    if (d->nests_in_any())
      if (auto r = d->in_job().launcher_ranks(env)) return r;
  if (auto r = ranks_from_open_mpi(env)) return r;
  for (const SchedulerDialect* d : dialects)
    if (!d->nests_in_any())
      if (auto r = d->in_job().launcher_ranks(env)) return r;
  return ranks_from_pmi(env);
}

TaskRanks detect_task_ranks(const Env& env, const FileReader& read_file) {
  std::optional<TaskRanks> r = launcher_ranks(env);
  const InJobFace* face = job_face(env);
  if (!r && face) r = face->batch_ranks(env, read_file);
  if (!r) {
    r = TaskRanks{};
    r->note = "not inside srun, mpirun or a batch job: a world of one (RANK=0, WORLD_SIZE=1)";
  }
  if (r->source.kind != RankKind::runner) {
    std::string scheduler_id = job_id(env);  // the scheduler's id names the job better than mpirun's
    if (!scheduler_id.empty()) r->job_id = scheduler_id;
  }
  return *r;
}

std::vector<std::string> job_nodes(const Env& env, const FileReader& read_file, const CommandReader& run) {
  const InJobFace* face = job_face(env);
  return face ? job_nodes_of(*face, env, read_file, run) : std::vector<std::string>{};
}

std::vector<std::string> step_nodes(const Env& env, const FileReader& read_file, const CommandReader& run) {
  const InJobFace* face = job_face(env);
  return face ? job_nodes_of(*face, env, read_file, run, true) : std::vector<std::string>{};
}

std::string job_id(const Env& env) {
  const InJobFace* face = job_face(env);
  std::string id = face ? face->job_id(env) : "";
  return id.empty() ? mpi_job_id(env) : id;
}

}  // namespace hpclaunch
