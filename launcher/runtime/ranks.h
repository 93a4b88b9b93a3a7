// Where a task's rank numbers come from: one pure function per launcher (Slurm, Open MPI, MPICH/PMI/PALS, PBS,
// hpclaunch's local emulation, a plain shell), and the one rule that picks among them. Inconsistent or missing
// numbers are an hpclaunch::Error, never a silent world of one inside a launcher.
#pragma once
#include <functional>
#include <optional>
#include <string>
#include <string_view>
#include <vector>

#include "runtime/environment.h"

namespace hpclaunch {

enum class RankSource { local, open_mpi, pmi, pals, slurm_step, slurm_batch, pbs_batch, shell };
const char* rank_source_name(RankSource s);  // "slurm", "open-mpi", ... (as printed by `hpclaunch env`)

struct TaskRanks {
  RankSource source = RankSource::shell;
  int rank = 0;
  int world_size = 1;
  int local_rank = 0;
  int local_world_size = 1;
  int node_rank = 0;  // GROUP_RANK; -1 when the launcher does not say and it cannot be derived
  int num_nodes = 1;  // GROUP_WORLD_SIZE; -1 likewise
  std::string job_id;  // the scheduler's or launcher's job id; empty if none
  std::string note;    // why the numbers are what they are, when that is not obvious (world of one)
};

// HPCLAUNCH_LOCAL_JOB is set and not "0" or empty: the task was started by `hpclaunch local-srun`.
bool is_local_job(const Env& env);

// Reads a whole file (PBS_NODEFILE); an effect, injected so tests need no files.
using FileReader = std::function<std::string(const std::string& path)>;

// Each returns nullopt when its launcher's variables are absent, the ranks when they are present and
// consistent, and throws hpclaunch::Error (naming the variables) when they are present but inconsistent.
std::optional<TaskRanks> ranks_from_local(const Env& env);      // HPCLAUNCH_LOCAL_JOB=1 (docs/CONTRACTS.md)
std::optional<TaskRanks> ranks_from_open_mpi(const Env& env);   // OMPI_COMM_WORLD_*
std::optional<TaskRanks> ranks_from_pmi(const Env& env);        // PMI_RANK/PMI_SIZE + MPI_LOCALRANKID/NRANKS
std::optional<TaskRanks> ranks_from_pals(const Env& env);       // PALS_RANKID, PALS_LOCAL_RANKID, PALS_NODEID
std::optional<TaskRanks> ranks_from_slurm_step(const Env& env); // a task started by srun (SLURM_STEP_ID set)
// The batch script itself (SLURM_JOB_ID or PBS_JOBID, no launcher): a world of one if the job has one task
// slot, an Error (start it under srun/mpirun) if it has more.
std::optional<TaskRanks> ranks_from_batch(const Env& env, const FileReader& read_file);

// The first source present, innermost launcher first: local, Open MPI, PALS, PMI, Slurm step, batch script,
// else a plain shell (world of one, with a note). The job id falls back to the enclosing scheduler's.
TaskRanks detect_task_ranks(const Env& env, const FileReader& read_file);

// The job's nodes in order, from SLURM_JOB_NODELIST, PBS_NODEFILE (unique hosts, first appearance first) or
// HPCLAUNCH_NODELIST. Empty if the environment names none (mpirun outside a scheduler).
std::vector<std::string> job_nodes(const Env& env, const FileReader& read_file);
// The nodes of this launch (SLURM_STEP_NODELIST inside an srun step), else job_nodes().
std::vector<std::string> step_nodes(const Env& env, const FileReader& read_file);
// The scheduler's or launcher's job id (SLURM_JOB_ID, PBS_JOBID, HPCLAUNCH_JOB_ID, Open MPI's jobid), or "".
std::string job_id(const Env& env);

// Unique host names of a PBS_NODEFILE's contents, in order of first appearance.
std::vector<std::string> parse_pbs_nodefile(std::string_view contents);

}  // namespace hpclaunch
