// Each scheduler's in-job face (dialect/in_job.h) on the environments its jobs have: Slurm (as printed on the test
// cluster), PBS Pro (OpenPBS 23.06 as observed, /work/shared/TEST-CLUSTER.md) with Open MPI's mpirun and with Cray
// PALS (variables as PALS documents them: no PALS here), the local runner (docs/CONTRACTS.md), and no job at all.
#include <doctest/doctest.h>

#include "agent/job_environment.h"
#include "dialect/dialect.h"
#include "dialect/in_job.h"
#include "dialect/mpi_in_job.h"
#include "runtime/ranks.h"
#include "test_util.h"
#include "util/error.h"

namespace in_job_test {  // this file's names, apart from its unity batch's others (tests/CMakeLists.txt)

using namespace hpclaunch;

namespace {

const FileReader k_nodefile = [](const std::string& path) -> std::string {
  if (path != "/var/spool/pbs/aux/12.gadi-pbs") throw Error(path, "no such file in the test");
  return "gadi-gpu-v100-0001\ngadi-gpu-v100-0001\ngadi-gpu-v100-0002\ngadi-gpu-v100-0002\n";
};
const FileReader k_no_files = [](const std::string& path) -> std::string { throw Error(path, "not readable here"); };

const InJobFace& slurm() { return dialect_for(Scheduler::slurm).in_job(); }
const InJobFace& pbs() { return dialect_for(Scheduler::pbs).in_job(); }
const InJobFace& local() { return dialect_for(Scheduler::local).in_job(); }

// The agent of node 1 in `srun --ntasks-per-node=1` of a two-node job on the test cluster, array task 3, rerun once.
Env slurm_agent() {
  return {{"SLURM_JOB_ID", "4250"},         {"SLURM_ARRAY_JOB_ID", "4242"},  {"SLURM_ARRAY_TASK_ID", "3"},
          {"SLURM_JOB_NODELIST", "n[1-2]"}, {"SLURM_JOB_NUM_NODES", "2"},    {"SLURM_NNODES", "2"},
          {"SLURM_NODEID", "1"},            {"SLURMD_NODENAME", "n2"},       {"SLURM_STEP_ID", "0"},
          {"SLURM_PROCID", "1"},            {"SLURM_LOCALID", "0"},          {"SLURM_STEP_NUM_TASKS", "2"},
          {"SLURM_STEP_NUM_NODES", "2"},    {"SLURM_STEP_TASKS_PER_NODE", "1(x2)"},
          {"SLURM_STEP_NODELIST", "n[1-2]"}, {"SLURM_RESTART_COUNT", "1"},   {"SLURM_GPUS_ON_NODE", "4"},
          {"SLURM_STEP_GPUS", "0,1,2,3"}};
}

// The Gadi agent launch: `mpirun -np 2 --hostfile $PBS_NODEFILE --map-by ppr:1:node ... -x MASTER_ADDR -x PBS_JOBID`,
// the agent of the second node (Open MPI 4.1's variables).
Env pbs_open_mpi_agent() {
  return {{"PBS_JOBID", "12.gadi-pbs"},           {"PBS_NODEFILE", "/var/spool/pbs/aux/12.gadi-pbs"},
          {"MASTER_ADDR", "gadi-gpu-v100-0001"},  {"OMPI_COMM_WORLD_RANK", "1"},
          {"OMPI_COMM_WORLD_SIZE", "2"},          {"OMPI_COMM_WORLD_LOCAL_RANK", "0"},
          {"OMPI_COMM_WORLD_LOCAL_SIZE", "1"},    {"OMPI_MCA_orte_num_nodes", "2"},
          {"OMPI_MCA_rmaps_base_mapping_policy", "ppr:1:node"}, {"CUDA_VISIBLE_DEVICES", "0,1,2,3"}};
}

// Rank 6 of Polaris's `mpiexec -n 8 --ppn 4` (Cray PALS) in PBS job 77 of array 77[].polaris, task 2.
Env pbs_pals_rank6() {
  return {{"PBS_JOBID", "77[2].polaris-pbs"}, {"PBS_ARRAY_ID", "77[].polaris-pbs"}, {"PBS_ARRAY_INDEX", "2"},
          {"PALS_RANKID", "6"}, {"PALS_LOCAL_RANKID", "2"}, {"PALS_NODEID", "1"}, {"PALS_LOCAL_SIZE", "4"},
          {"PMI_SIZE", "8"}, {"PMI_RANK", "6"}, {"PALS_APID", "abc-1"}};
}

Env local_task3() {
  return {{"HPCLAUNCH_LOCAL_JOB", "1"},       {"HPCLAUNCH_JOB_ID", "local-1732189200-4242"},
          {"HPCLAUNCH_NODELIST", "node[0-1]"}, {"HPCLAUNCH_NNODES", "2"},
          {"HPCLAUNCH_NODE_RANK", "1"},        {"HPCLAUNCH_NODENAME", "node1"},
          {"HPCLAUNCH_NTASKS", "4"},           {"HPCLAUNCH_TASKS_PER_NODE", "2"},
          {"HPCLAUNCH_TASK_RANK", "3"},        {"HPCLAUNCH_TASK_LOCAL_RANK", "1"},
          {"HPCLAUNCH_GPUS", "0,1"}};
}

}  // namespace

TEST_SUITE_BEGIN("in_job");

TEST_CASE("which face a job has: local innermost, then Slurm, then PBS; none outside a job") {
  CHECK(job_face(slurm_agent()) == &slurm());
  CHECK(job_face(pbs_open_mpi_agent()) == &pbs());
  CHECK(job_face(pbs_pals_rank6()) == &pbs());
  CHECK(job_face(local_task3()) == &local());
  Env local_in_slurm = local_task3();
  local_in_slurm["SLURM_JOB_ID"] = "5";
  CHECK(job_face(local_in_slurm) == &local());
  CHECK(job_face({}) == nullptr);
  CHECK(job_face({{"HPCLAUNCH_LOCAL_JOB", "0"}}) == nullptr);
  CHECK(job_face({{"SLURM_JOB_ID", ""}, {"PBS_JOBID", ""}}) == nullptr);
  CHECK(job_face({{"SLURM_JOBID", "8"}}) == &slurm());  // the old spelling alone
  // mpirun outside any scheduler is no job: its ranks are the launcher's alone.
  CHECK(job_face({{"OMPI_COMM_WORLD_RANK", "0"}, {"OMPI_COMM_WORLD_SIZE", "1"}}) == nullptr);
  CHECK(std::string(slurm().name()) == "slurm");
  CHECK(std::string(pbs().name()) == "pbs");
  CHECK(std::string(local().name()) == "local");
}

TEST_CASE("Slurm's face: ids, array task, nodes, this node, restarts, GPUs, the step's signals") {
  Env env = slurm_agent();
  CHECK(slurm().job_id(env) == "4250");
  REQUIRE(slurm().array_task(env).has_value());
  CHECK(slurm().array_task(env)->array_id == "4242");
  CHECK(slurm().array_task(env)->index == 3);
  CHECK(slurm().job_nodes(env, k_no_files) == std::vector<std::string>{"n1", "n2"});
  CHECK(slurm().step_nodes(env, k_no_files) == std::vector<std::string>{"n1", "n2"});
  CHECK(slurm().node_count(env) == 2);
  CHECK(slurm().node_rank(env) == 1);
  CHECK(slurm().node_name(env) == "n2");
  CHECK(slurm().restart_count(env) == 1);
  CHECK(slurm().gpu_list(env) == "0,1,2,3");
  CHECK(slurm().gpu_count(env) == 4);
  CHECK_FALSE(slurm().gpus_bound_per_task(env));
  CHECK(slurm().step_signals_workers(env));
  CHECK_FALSE(slurm().default_master_addr(env).has_value());
  REQUIRE(slurm().launcher_ranks(env).has_value());
  CHECK(slurm().launcher_ranks(env)->rank == 1);
  CHECK(slurm().launcher_ranks(env)->node_rank == 1);
}

TEST_CASE("Slurm's face in the batch script: no step, no array, a first run, the GPU count in its other forms") {
  Env batch = {{"SLURM_JOB_ID", "7"}, {"SLURM_JOB_NODELIST", "n[1-2]"}, {"SLURM_NNODES", "2"},
               {"SLURM_GPUS_PER_NODE", "a100:4"}, {"SLURM_NTASKS", "8"}};
  CHECK_FALSE(slurm().array_task(batch).has_value());
  CHECK_FALSE(slurm().step_signals_workers(batch));
  CHECK_FALSE(slurm().launcher_ranks(batch).has_value());
  CHECK(slurm().restart_count(batch) == 0);
  CHECK(slurm().gpu_count(batch) == 4);
  CHECK_FALSE(slurm().node_rank(batch).has_value());
  CHECK(test::error_of_call([&] { slurm().batch_ranks(batch, k_no_files); }).rfind("SLURM_STEP_ID: not set", 0) == 0);
  batch["SLURM_GPUS_PER_NODE"] = "";
  batch["CUDA_VISIBLE_DEVICES"] = "0,1";
  CHECK(slurm().gpu_count(batch) == 2);
  batch["SLURM_RESTART_COUNT"] = "x";
  CHECK(test::error_of_call([&] { slurm().restart_count(batch); }).rfind("SLURM_RESTART_COUNT: 'x' is not", 0) == 0);
  // --gpus-per-task or --gpu-bind: slurmd bound each task's GPUs.
  CHECK(slurm().gpus_bound_per_task({{"SLURM_JOB_ID", "7"}, {"SLURMD_TRES_BIND", "gpu:per_task:1"}}));
  TaskRanks one = slurm().batch_ranks({{"SLURM_JOB_ID", "7"}, {"SLURM_NTASKS", "1"}}, k_no_files);
  CHECK((one.source == RankSource{RankKind::batch, "slurm-batch"}));
  CHECK(one.world_size == 1);
}

TEST_CASE("Slurm's step nodes under Open MPI are the job's: an orted's srun step names its own node alone") {
  Env env = {{"SLURM_JOB_ID", "7"}, {"SLURM_JOB_NODELIST", "n[1-2]"}, {"SLURM_STEP_NODELIST", "n2"},
             {"OMPI_COMM_WORLD_SIZE", "8"}};
  CHECK(slurm().step_nodes(env, k_no_files) == std::vector<std::string>{"n1", "n2"});
  env.erase("OMPI_COMM_WORLD_SIZE");
  CHECK(slurm().step_nodes(env, k_no_files) == std::vector<std::string>{"n2"});
}

TEST_CASE("srun's PMI agrees with its step; Hydra under srun numbers its own tasks") {
  Env env = slurm_agent();
  env["PMI_RANK"] = "1";
  env["PMI_SIZE"] = "2";
  CHECK(slurm().launcher_ranks(env).has_value());
  env["PMI_RANK"] = "0";
  CHECK_FALSE(slurm().launcher_ranks(env).has_value());
}

TEST_CASE("PBS's face under Open MPI: the job id, the node file, no node index of its own, nothing Slurm-only") {
  Env env = pbs_open_mpi_agent();
  CHECK(pbs().job_id(env) == "12.gadi-pbs");
  CHECK_FALSE(pbs().array_task(env).has_value());
  CHECK(pbs().job_nodes(env, k_nodefile) == std::vector<std::string>{"gadi-gpu-v100-0001", "gadi-gpu-v100-0002"});
  CHECK(pbs().step_nodes(env, k_nodefile) == pbs().job_nodes(env, k_nodefile));
  CHECK_FALSE(pbs().node_count(env).has_value());
  CHECK_FALSE(pbs().node_rank(env).has_value());
  CHECK(pbs().node_name(env).empty());
  CHECK(pbs().restart_count(env) == 0);
  CHECK_FALSE(pbs().gpu_list(env).has_value());
  CHECK(pbs().gpu_count(env) == 4);  // its cgroup hook's CUDA_VISIBLE_DEVICES
  CHECK_FALSE(pbs().gpus_bound_per_task(env));
  CHECK_FALSE(pbs().step_signals_workers(env));
  CHECK_FALSE(pbs().launcher_ranks(env).has_value());  // Open MPI's, not PBS's own (mpi_in_job.h)
  // The node file is on the first host alone: elsewhere its reading says so.
  CHECK(test::error_of_call([&] { pbs().job_nodes(env, k_no_files); }).find("exists only on the job's first host") !=
        std::string::npos);
  // Open MPI tells the rank of this agent, one per node.
  auto r = ranks_from_open_mpi(env);
  REQUIRE(r.has_value());
  CHECK(r->node_rank == 1);
  CHECK(r->num_nodes == 2);
  CHECK((launcher_ranks(env)->source == RankSource{RankKind::mpi, "open-mpi"}));
}

TEST_CASE("PBS's face with Cray PALS: PALS's ranks and node, the array's id and index") {
  Env env = pbs_pals_rank6();
  REQUIRE(pbs().array_task(env).has_value());
  CHECK(pbs().array_task(env)->array_id == "77[].polaris-pbs");
  CHECK(pbs().array_task(env)->index == 2);
  auto r = pbs().launcher_ranks(env);
  REQUIRE(r.has_value());
  CHECK((r->source == RankSource{RankKind::mpi, "pals"}));
  CHECK(r->rank == 6);
  CHECK(r->local_rank == 2);
  CHECK(r->node_rank == 1);
  CHECK(r->num_nodes == 2);
  TaskRanks detected = detect_task_ranks(env, k_no_files);
  CHECK((detected.source == RankSource{RankKind::mpi, "pals"}));
  CHECK(detected.job_id == "77[2].polaris-pbs");  // the scheduler's id wins over PALS's application id
  CHECK(pbs().job_nodes(env, k_no_files).empty());  // no PBS_NODEFILE passed on
}

TEST_CASE("PBS's batch script: a world of one with one slot, an Error with more") {
  Env env = {{"PBS_JOBID", "12.gadi-pbs"}, {"PBS_NODEFILE", "/var/spool/pbs/aux/12.gadi-pbs"}};
  CHECK(test::error_of_call([&] { pbs().batch_ranks(env, k_nodefile); }).rfind("PBS_NODEFILE: lists 4 MPI slots", 0) == 0);
  TaskRanks one = pbs().batch_ranks({{"PBS_JOBID", "13.pbs"}}, k_no_files);
  CHECK((one.source == RankSource{RankKind::batch, "pbs-batch"}));
  CHECK(one.world_size == 1);
  CHECK(test::error_of_call([&] {
          pbs().job_nodes({{"PBS_JOBID", "1"}, {"PBS_NODEFILE", "/e"}}, [](const std::string&) { return std::string("\n"); });
        }) == "PBS_NODEFILE: '/e' lists no host; check the job's select");
}

TEST_CASE("the local runner's face: its variables, one address for every node, local-srun's ranks") {
  Env env = local_task3();
  CHECK(local().job_id(env) == "local-1732189200-4242");
  CHECK_FALSE(local().array_task(env).has_value());
  CHECK(local().job_nodes(env, k_no_files) == std::vector<std::string>{"node0", "node1"});
  CHECK(local().node_count(env) == 2);
  CHECK(local().node_rank(env) == 1);
  CHECK(local().node_name(env) == "node1");
  CHECK(local().gpu_list(env) == "0,1");
  CHECK(local().gpu_count(env) == 2);
  CHECK(local().default_master_addr(env) == "127.0.0.1");
  CHECK_FALSE(local().step_signals_workers(env));
  CHECK(local().restart_count(env) == 0);
  env["HPCLAUNCH_RESTART_COUNT"] = "2";
  CHECK(local().restart_count(env) == 2);
  CHECK(local().launcher_ranks(env)->rank == 3);
  env.erase("HPCLAUNCH_NODELIST");
  CHECK(test::error_of_call([&] { local().job_nodes(env, k_no_files); }).rfind("HPCLAUNCH_NODELIST: not set", 0) == 0);
}

TEST_CASE("the agent's view of each job: the face's answers, and under PBS the MPI rank as the node's") {
  RuntimeRules rules;
  rules.master_addr = [](const Env& env) { return env_get(env, "MASTER_ADDR").value_or(""); };
  rules.rendezvous_port = [](const Env&, const std::string& id) { return id.empty() ? 0 : 20012; };
  JobEnvironment gadi = read_job_environment(pbs_open_mpi_agent(), rules);
  CHECK(gadi.source == "pbs");
  CHECK(gadi.job_id == "12.gadi-pbs");
  CHECK(gadi.node_rank == 1);
  CHECK(gadi.nnodes == 2);
  CHECK(gadi.gpus == 4);
  CHECK(gadi.master_addr == "gadi-gpu-v100-0001");
  CHECK(gadi.rendezvous_port == 20012);
  JobEnvironment s = read_job_environment(slurm_agent(), rules);
  CHECK(s.source == "slurm");
  CHECK(s.node_rank == 1);
  CHECK(s.node_name == "n2");
  CHECK(s.gpus == 4);
  // The PBS batch script itself, no mpirun: no node rank to give.
  JobEnvironment batch = read_job_environment({{"PBS_JOBID", "3.pbs"}}, rules);
  CHECK(batch.source == "pbs");
  CHECK_FALSE(batch.node_rank.has_value());
  CHECK(read_job_environment({}, rules).source.empty());
}

TEST_CASE("the neutral HPCLAUNCH_* variables of every scheduler's job: ids, array task, node rank and name") {
  using Vars = std::vector<std::pair<std::string, std::string>>;
  CHECK(neutral_job_vars(slurm_agent()) == Vars{{"HPCLAUNCH_JOB_ID", "4250"},
                                                {"HPCLAUNCH_ARRAY_JOB_ID", "4242"},
                                                {"HPCLAUNCH_ARRAY_TASK_ID", "3"},
                                                {"HPCLAUNCH_NODE_RANK", "1"},
                                                {"HPCLAUNCH_NODENAME", "n2"}});
  // PBS names no node of its own: the launcher's node rank (the MPI rank of the agent, the task's GROUP_RANK).
  CHECK(neutral_job_vars(pbs_open_mpi_agent(), 1) == Vars{{"HPCLAUNCH_JOB_ID", "12.gadi-pbs"},
                                                           {"HPCLAUNCH_NODE_RANK", "1"}});
  CHECK(neutral_job_vars(pbs_open_mpi_agent(), -1) == Vars{{"HPCLAUNCH_JOB_ID", "12.gadi-pbs"}});
  CHECK(neutral_job_vars(pbs_pals_rank6()) == Vars{{"HPCLAUNCH_JOB_ID", "77[2].polaris-pbs"},
                                                   {"HPCLAUNCH_ARRAY_JOB_ID", "77[].polaris-pbs"},
                                                   {"HPCLAUNCH_ARRAY_TASK_ID", "2"}});
  Env local = local_task3();
  local["HPCLAUNCH_ARRAY_TASK"] = "5";  // the local runner's array: its job id is the array's
  CHECK(neutral_job_vars(local) == Vars{{"HPCLAUNCH_JOB_ID", "local-1732189200-4242"},
                                        {"HPCLAUNCH_ARRAY_JOB_ID", "local-1732189200-4242"},
                                        {"HPCLAUNCH_ARRAY_TASK_ID", "5"},
                                        {"HPCLAUNCH_NODE_RANK", "1"},
                                        {"HPCLAUNCH_NODENAME", "node1"}});
  CHECK(neutral_job_vars({{"HOME", "/root"}}, 0).empty());  // outside a job
}

TEST_CASE("the runtime's job id: the scheduler's, else the MPI launcher's") {
  CHECK(job_id(pbs_open_mpi_agent()) == "12.gadi-pbs");
  CHECK(job_id({{"OMPI_MCA_ess_base_jobid", "1276116993"}}) == "1276116993");
  CHECK(job_id({{"PALS_APID", "abc-1"}}) == "abc-1");
  CHECK(job_id({}).empty());
}

TEST_SUITE_END();

}  // namespace in_job_test
