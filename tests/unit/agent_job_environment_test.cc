// The agent's view of its allocation agrees with the runtime's (launcher/runtime/ranks.h): one reading of
// HPCLAUNCH_LOCAL_JOB and of the job id variables.
#include <doctest/doctest.h>

#include "agent/job_environment.h"
#include "runtime/ranks.h"

namespace agent_job_environment_test {  // this file's names, apart from its unity batch's others (tests/CMakeLists.txt)

using namespace hpclaunch;

TEST_SUITE_BEGIN("agent_job_environment");

TEST_CASE("HPCLAUNCH_LOCAL_JOB=0 is not a local job, for the agent as for the runtime") {
  Env env = {{"HPCLAUNCH_LOCAL_JOB", "0"}, {"SLURM_JOB_ID", "77"}, {"SLURM_NNODES", "2"}, {"SLURM_NODEID", "1"}};
  JobEnvironment job = read_job_environment(env, {});
  CHECK(job.source == "slurm");
  CHECK(job.job_id == "77");
  CHECK(job.node_rank == 1);
}

TEST_CASE("SLURM_JOBID alone names a Slurm job, for the agent as for the runtime") {
  Env env = {{"SLURM_JOBID", "88"}, {"SLURM_JOB_NUM_NODES", "3"}, {"SLURM_NODEID", "0"}};
  CHECK(job_id(env) == "88");
  JobEnvironment job = read_job_environment(env, {});
  CHECK(job.source == "slurm");
  CHECK(job.job_id == "88");
  CHECK(job.nnodes == 3);
}

TEST_CASE("a local job is read from HPCLAUNCH_* variables; no variables at all is no job") {
  Env local = {{"HPCLAUNCH_LOCAL_JOB", "1"}, {"HPCLAUNCH_JOB_ID", "local-1-2"}, {"HPCLAUNCH_NNODES", "2"},
               {"HPCLAUNCH_NODE_RANK", "1"}, {"HPCLAUNCH_GPUS", "0,1"}};
  JobEnvironment job = read_job_environment(local, {});
  CHECK(job.source == "local");
  CHECK(job.job_id == "local-1-2");
  CHECK(job.gpus == 2);
  CHECK(read_job_environment({}, {}).source.empty());
}

TEST_SUITE_END();

}  // namespace agent_job_environment_test
