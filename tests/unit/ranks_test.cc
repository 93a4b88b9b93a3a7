#include <doctest/doctest.h>

#include "test_util.h"

#include "schedulers/pbs/dialect.h"
#include "runtime/ranks.h"
#include "util/error.h"

namespace ranks_test {  // this file's names, apart from its unity batch's others (tests/CMakeLists.txt)

using namespace hpclaunch;

namespace {

FileReader files(std::map<std::string, std::string> contents) {
  return [contents](const std::string& path) {
    auto it = contents.find(path);
    if (it == contents.end()) throw Error(path, "no such file in the test");
    return it->second;
  };
}
const FileReader k_no_files = files({});

std::string error_of(const Env& env, const FileReader& read = k_no_files) {
  return test::error_of_call([&] { detect_task_ranks(env, read); });
}

// Task 2 of `srun -N2 -n3` in a job of `-N2 --ntasks-per-node=2` on the test cluster, as printed there.
Env slurm_task2() {
  return {{"SLURMD_NODENAME", "n2"},          {"SLURM_JOB_ID", "3"},
          {"SLURM_JOB_NODELIST", "n[1-2]"},   {"SLURM_JOB_NUM_NODES", "2"},
          {"SLURM_LOCALID", "0"},             {"SLURM_NNODES", "2"},
          {"SLURM_NODEID", "1"},              {"SLURM_NODELIST", "n[1-2]"},
          {"SLURM_NTASKS", "3"},              {"SLURM_NTASKS_PER_NODE", "2"},
          {"SLURM_PROCID", "2"},              {"SLURM_STEPID", "0"},
          {"SLURM_STEP_GPUS", "0,1,2,3"},     {"SLURM_STEP_ID", "0"},
          {"SLURM_STEP_NODELIST", "n[1-2]"},  {"SLURM_STEP_NUM_NODES", "2"},
          {"SLURM_STEP_NUM_TASKS", "3"},      {"SLURM_STEP_TASKS_PER_NODE", "2,1"},
          {"SLURM_TASKS_PER_NODE", "2,1"},    {"CUDA_VISIBLE_DEVICES", "0,1,2,3"}};
}

// Rank 5 of `mpirun -np 8` over two nodes of four slots (Open MPI 4.1 variables).
Env open_mpi_rank5() {
  return {{"OMPI_COMM_WORLD_RANK", "5"},       {"OMPI_COMM_WORLD_SIZE", "8"},
          {"OMPI_COMM_WORLD_LOCAL_RANK", "1"}, {"OMPI_COMM_WORLD_LOCAL_SIZE", "4"},
          {"OMPI_COMM_WORLD_NODE_RANK", "1"},  {"OMPI_MCA_orte_num_nodes", "2"},
          {"OMPI_MCA_ess_base_jobid", "1276116993"}};
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

TEST_SUITE_BEGIN("ranks");

TEST_CASE("a Slurm task takes its numbers from srun's step variables") {
  TaskRanks r = detect_task_ranks(slurm_task2(), k_no_files);
  CHECK((r.source == RankSource{RankKind::step, "slurm"}));
  CHECK(r.rank == 2);
  CHECK(r.world_size == 3);
  CHECK(r.local_rank == 0);
  CHECK(r.local_world_size == 1);  // node 2 of "2,1"
  CHECK(r.node_rank == 1);
  CHECK(r.num_nodes == 2);
  CHECK(r.job_id == "3");
  CHECK(step_nodes(slurm_task2(), k_no_files) == std::vector<std::string>{"n1", "n2"});
}

TEST_CASE("an mpirun rank on another node of a Slurm job takes the job's nodes, not its orted's step") {
  Env env = slurm_task2();  // as under an orted that mpirun started with `srun --nodelist=n2`
  env["SLURM_STEP_NODELIST"] = "n2";
  env["OMPI_COMM_WORLD_SIZE"] = "4";
  env["OMPI_COMM_WORLD_RANK"] = "2";
  env["OMPI_COMM_WORLD_LOCAL_RANK"] = "0";
  env["OMPI_COMM_WORLD_LOCAL_SIZE"] = "2";
  CHECK(step_nodes(env, k_no_files) == std::vector<std::string>{"n1", "n2"});
  env.erase("OMPI_COMM_WORLD_SIZE");  // an srun task: its own step's nodes
  CHECK(step_nodes(env, k_no_files) == std::vector<std::string>{"n2"});
}

TEST_CASE("a Slurm task understands the 4(x2),3 form") {
  Env env = slurm_task2();
  env["SLURM_STEP_TASKS_PER_NODE"] = "4(x2),3";
  env["SLURM_STEP_NUM_NODES"] = "3";
  env["SLURM_STEP_NUM_TASKS"] = "11";
  env["SLURM_STEP_NODELIST"] = "n[1-3]";
  env["SLURM_PROCID"] = "9";
  env["SLURM_NODEID"] = "2";
  env["SLURMD_NODENAME"] = "n3";
  env["SLURM_LOCALID"] = "1";
  TaskRanks r = detect_task_ranks(env, k_no_files);
  CHECK(r.world_size == 11);
  CHECK(r.local_world_size == 3);
  CHECK(r.node_rank == 2);
  CHECK(r.num_nodes == 3);
}

TEST_CASE("a Slurm task with missing or contradictory variables is an error, not a world of one") {
  Env env = slurm_task2();
  env.erase("SLURM_PROCID");
  CHECK(error_of(env).rfind("SLURM_PROCID: not set, but this is a Slurm task", 0) == 0);
  env = slurm_task2();
  env["SLURM_STEP_NUM_TASKS"] = "4";
  CHECK(error_of(env).find("tasks per node add up to 3, not SLURM_STEP_NUM_TASKS=4") != std::string::npos);
  env = slurm_task2();
  env["SLURM_LOCALID"] = "1";
  CHECK(error_of(env).find("SLURM_LOCALID=1 is not below") != std::string::npos);
  env = slurm_task2();
  env["SLURMD_NODENAME"] = "n1";
  CHECK(error_of(env).find("SLURMD_NODENAME=n1 but SLURM_NODEID=1 is n2") != std::string::npos);
  env = slurm_task2();
  env["SLURM_PROCID"] = "three";
  CHECK(error_of(env).rfind("SLURM_PROCID: 'three' is not a whole number", 0) == 0);
  env = slurm_task2();
  env["SLURM_STEP_NODELIST"] = "n[1-2";
  CHECK(error_of(env).rfind("SLURM_STEP_NODELIST: malformed hostlist", 0) == 0);
}

TEST_CASE("the Slurm batch script is a world of one only when the job has one task") {
  Env env = {{"SLURM_JOB_ID", "7"}, {"SLURM_NTASKS", "1"}, {"SLURM_JOB_NUM_NODES", "1"},
             {"SLURM_JOB_NODELIST", "nid001000"}, {"SLURM_PROCID", "0"}};
  TaskRanks r = detect_task_ranks(env, k_no_files);
  CHECK((r.source == RankSource{RankKind::batch, "slurm-batch"}));
  CHECK(r.world_size == 1);
  CHECK(r.note.find("batch script of Slurm job 7") != std::string::npos);
  env["SLURM_NTASKS"] = "8";
  env["SLURM_JOB_NUM_NODES"] = "2";
  CHECK(error_of(env).find("this is the batch script of Slurm job 7 (8 tasks on 2 nodes)") != std::string::npos);
}

TEST_CASE("an Open MPI rank reads OMPI_COMM_WORLD_* and derives its node from block placement") {
  TaskRanks r = detect_task_ranks(open_mpi_rank5(), k_no_files);
  CHECK((r.source == RankSource{RankKind::mpi, "open-mpi"}));
  CHECK(r.rank == 5);
  CHECK(r.world_size == 8);
  CHECK(r.local_rank == 1);
  CHECK(r.local_world_size == 4);
  CHECK(r.node_rank == 1);
  CHECK(r.num_nodes == 2);
  CHECK(r.job_id == "1276116993");
}

TEST_CASE("Open MPI --map-by node: ranks go round robin over the nodes") {
  // 6 ranks over 3 nodes: node 0 has ranks 0 and 3. Block arithmetic would put rank 3 on node 1.
  Env env = {{"OMPI_COMM_WORLD_RANK", "3"}, {"OMPI_COMM_WORLD_SIZE", "6"}, {"OMPI_COMM_WORLD_LOCAL_RANK", "1"},
             {"OMPI_COMM_WORLD_LOCAL_SIZE", "2"}, {"OMPI_MCA_orte_num_nodes", "3"},
             {"OMPI_MCA_rmaps_base_mapping_policy", "node"}};
  TaskRanks r = detect_task_ranks(env, k_no_files);
  CHECK(r.node_rank == 0);
  CHECK(r.num_nodes == 3);
  env["OMPI_MCA_rmaps_base_mapping_policy"] = "socket:span";  // spread: the node is not derivable
  CHECK(detect_task_ranks(env, k_no_files).node_rank == -1);
  env["OMPI_MCA_rmaps_base_mapping_policy"] = ":OVERSUBSCRIBE";  // the Sockeye seed's: default block placement
  CHECK(detect_task_ranks(env, k_no_files).node_rank == 1);
}

TEST_CASE("Open MPI ranks that do not fit the placement leave the node index unknown rather than wrong") {
  Env env = open_mpi_rank5();  // block placement claimed, but rank 5 as local rank 2 of 4 does not fit
  env["OMPI_COMM_WORLD_LOCAL_RANK"] = "2";
  TaskRanks r = detect_task_ranks(env, k_no_files);
  CHECK(r.node_rank == -1);
  CHECK(r.rank == 5);
}

TEST_CASE("Open MPI inside a Slurm job: MPI numbers win, the job id is Slurm's") {
  Env env = open_mpi_rank5();
  Env slurm = slurm_task2();  // the orted step's variables, which mpirun's ranks inherit
  env.insert(slurm.begin(), slurm.end());
  TaskRanks r = detect_task_ranks(env, k_no_files);
  CHECK((r.source == RankSource{RankKind::mpi, "open-mpi"}));
  CHECK(r.rank == 5);
  CHECK(r.job_id == "3");
}

TEST_CASE("Open MPI with a missing or contradictory variable is an error") {
  Env env = open_mpi_rank5();
  env.erase("OMPI_COMM_WORLD_SIZE");
  CHECK(error_of(env).rfind("OMPI_COMM_WORLD_SIZE: not set, but this is an Open MPI task", 0) == 0);
  env = open_mpi_rank5();
  env["OMPI_COMM_WORLD_RANK"] = "8";
  CHECK(error_of(env).find("OMPI_COMM_WORLD_RANK=8 is not below OMPI_COMM_WORLD_SIZE=8") != std::string::npos);
}

TEST_CASE("MPICH Hydra ranks come from PMI_RANK and MPI_LOCALRANKID") {
  Env env = {{"PMI_RANK", "3"}, {"PMI_SIZE", "4"}, {"MPI_LOCALRANKID", "1"}, {"MPI_LOCALNRANKS", "2"}};
  TaskRanks r = detect_task_ranks(env, k_no_files);
  CHECK((r.source == RankSource{RankKind::mpi, "pmi"}));
  CHECK(r.rank == 3);
  CHECK(r.local_rank == 1);
  CHECK(r.node_rank == 1);
  CHECK(r.num_nodes == 2);
  env.erase("MPI_LOCALRANKID");
  env.erase("MPI_LOCALNRANKS");
  CHECK(error_of(env).find("PMI_RANK: set, but neither MPI_LOCALRANKID") != std::string::npos);
  env = {{"PMI_RANK", "0"}};
  CHECK(error_of(env).rfind("PMI_SIZE: not set", 0) == 0);
}

TEST_CASE("srun's own PMI repeats SLURM_PROCID: the Slurm task's numbers are used") {
  Env env = slurm_task2();
  env["PMI_RANK"] = "2";
  env["PMI_SIZE"] = "3";
  TaskRanks r = detect_task_ranks(env, k_no_files);
  CHECK((r.source == RankSource{RankKind::step, "slurm"}));
  CHECK(r.local_world_size == 1);
}

TEST_CASE("Cray PALS ranks (no PALS here: variables as PALS documents them)") {
  Env env = {{"PALS_RANKID", "6"}, {"PALS_LOCAL_RANKID", "2"}, {"PALS_NODEID", "1"}, {"PMI_SIZE", "8"},
             {"PALS_LOCAL_SIZE", "4"}, {"PMI_RANK", "6"}, {"PALS_APID", "abc-1"}};
  TaskRanks r = detect_task_ranks(env, k_no_files);
  CHECK((r.source == RankSource{RankKind::mpi, "pals"}));
  CHECK(r.rank == 6);
  CHECK(r.node_rank == 1);
  CHECK(r.num_nodes == 2);
  CHECK(r.job_id == "abc-1");
  env["PMI_RANK"] = "5";
  CHECK(error_of(env).find("PALS_RANKID=6 but PMI_RANK=5") != std::string::npos);
}

TEST_CASE("PBS: the node file gives the hosts; the batch script of a many-slot job has no rank") {
  // select=2:ncpus=2:mpiprocs=2 on two hosts: each host once per MPI process.
  FileReader read = files({{"/var/spool/pbs/aux/12.pbshost", "cn01\ncn01\ncn02\ncn02\n"}});
  Env env = {{"PBS_JOBID", "12.pbshost"}, {"PBS_NODEFILE", "/var/spool/pbs/aux/12.pbshost"},
             {"PBS_ENVIRONMENT", "PBS_BATCH"}};
  CHECK(job_nodes(env, read) == std::vector<std::string>{"cn01", "cn02"});
  CHECK(error_of(env, read).rfind("PBS_NODEFILE: lists 4 MPI slots: this is the batch script of PBS job 12.pbshost", 0) == 0);
  Env in_mpirun = open_mpi_rank5();
  in_mpirun.insert(env.begin(), env.end());
  TaskRanks r = detect_task_ranks(in_mpirun, read);
  CHECK((r.source == RankSource{RankKind::mpi, "open-mpi"}));
  CHECK(r.job_id == "12.pbshost");
  FileReader one = files({{"/nf", "cn01\n"}});
  r = detect_task_ranks({{"PBS_JOBID", "13.pbshost"}, {"PBS_NODEFILE", "/nf"}}, one);
  CHECK((r.source == RankSource{RankKind::batch, "pbs-batch"}));
  CHECK(r.world_size == 1);
  CHECK(parse_pbs_nodefile(" a\n\nb\na\n") == std::vector<std::string>{"a", "b"});
  CHECK(test::error_of_call([&] { job_nodes({{"PBS_JOBID", "14.pbshost"}, {"PBS_NODEFILE", "/gone"}}, read); })
            .rfind("PBS_NODEFILE: /gone: no such file in the test; it exists only on", 0) == 0);
}

TEST_CASE("hpclaunch local tasks follow docs/CONTRACTS.md") {
  TaskRanks r = detect_task_ranks(local_task3(), k_no_files);
  CHECK((r.source == RankSource{RankKind::runner, "hpclaunch-local"}));
  CHECK(r.rank == 3);
  CHECK(r.world_size == 4);
  CHECK(r.local_rank == 1);
  CHECK(r.local_world_size == 2);
  CHECK(r.node_rank == 1);
  CHECK(r.num_nodes == 2);
  CHECK(r.job_id == "local-1732189200-4242");
  CHECK(job_nodes(local_task3(), k_no_files) == std::vector<std::string>{"node0", "node1"});
  Env env = local_task3();
  env["HPCLAUNCH_TASK_RANK"] = "1";
  CHECK(error_of(env).find("HPCLAUNCH_TASK_RANK=1 is not node 1's first rank 2 + local rank 1") != std::string::npos);
  env = local_task3();
  env.erase("HPCLAUNCH_NNODES");
  CHECK(error_of(env).rfind("HPCLAUNCH_NNODES: not set", 0) == 0);
}

TEST_CASE("a plain shell is a world of one, with a note saying so") {
  TaskRanks r = detect_task_ranks({{"HOME", "/root"}}, k_no_files);
  CHECK(r.source == RankSource{});
  CHECK(r.rank == 0);
  CHECK(r.world_size == 1);
  CHECK(r.note.find("world of one") != std::string::npos);
  CHECK(job_nodes({{"HOME", "/root"}}, k_no_files).empty());
}

TEST_SUITE_END();

}  // namespace ranks_test
