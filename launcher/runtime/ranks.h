// Where a task's rank numbers come from: the one rule that picks among the launchers' readers (the schedulers'
// in-job faces, dialect/in_job.h, and the MPI launchers, dialect/mpi_in_job.h), and the job's nodes and id as the
// job's face gives them. Inconsistent or missing numbers are an hpclaunch::Error, never a silent world of one inside
// a launcher.
#pragma once
#include <string>
#include <vector>

#include "dialect/in_job.h"
#include "util/environment.h"

namespace hpclaunch {

// The first source present, innermost launcher first: local-srun, Open MPI, a scheduler's own launcher (Cray PALS,
// srun), MPICH/PMI, then the job's batch script, else a plain shell (world of one, with a note). The job id falls
// back to the enclosing scheduler's.
TaskRanks detect_task_ranks(const Env& env, const FileReader& read_file);
// The same without the batch script and the shell: nullopt when no launcher started this task.
std::optional<TaskRanks> launcher_ranks(const Env& env);

// The job's nodes in order, as the job's face gives them (SLURM_JOB_NODELIST, PBS_NODEFILE's unique hosts,
// HPCLAUNCH_NODELIST; or a command's answer, run through `run`, for a face that names them only so:
// dialect/in_job.h's job_nodes_of). Empty outside a job, or when the job names none (mpirun outside a scheduler).
std::vector<std::string> job_nodes(const Env& env, const FileReader& read_file, const CommandReader& run = {});
// The nodes of this launch (a Slurm step's), else job_nodes().
std::vector<std::string> step_nodes(const Env& env, const FileReader& read_file, const CommandReader& run = {});
// The scheduler's job id, else the MPI launcher's, or "".
std::string job_id(const Env& env);

}  // namespace hpclaunch
