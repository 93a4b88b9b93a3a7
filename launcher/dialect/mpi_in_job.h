// The MPI launchers that start tasks under any scheduler (or none): Open MPI's mpirun (OMPI_COMM_WORLD_*, with
// PMIx) and MPICH's Hydra / Cray PMI (PMI_RANK, PMI_SIZE). Cray PALS, PBS's own, is the PBS face's launcher and
// srun Slurm's (dialect/in_job.h). Pure: each reads a given environment.
#pragma once
#include <optional>
#include <string>

#include "dialect/in_job.h"

namespace hpclaunch {

// Each returns nullopt when its launcher's variables are absent, the ranks when they are present and consistent,
// and throws hpclaunch::Error (naming the variables) when they are present but inconsistent.
std::optional<TaskRanks> ranks_from_open_mpi(const Env& env);  // OMPI_COMM_WORLD_*
std::optional<TaskRanks> ranks_from_pmi(const Env& env);       // PMI_RANK/PMI_SIZE + MPI_LOCALRANKID/NRANKS
// The launcher's own job id (Open MPI's jobid, PALS's application id) when no scheduler names one; "" if none.
std::string mpi_job_id(const Env& env);

}  // namespace hpclaunch
