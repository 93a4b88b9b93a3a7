#include <doctest/doctest.h>

#include "runtime/task_env.h"
#include "util/error.h"

namespace task_env_test {  // this file's names, apart from its unity batch's others (tests/CMakeLists.txt)

using namespace hpclaunch;

TEST_SUITE_BEGIN("task_env");

namespace {
TaskEnvEffects fake_effects() {
  return {[](const std::string& path) -> std::string { throw Error(path, "no files in this test"); },
          [](const std::string& host) -> std::optional<std::string> {
            if (host == "n1") return "127.0.1.1";
            if (host == "127.0.0.1") return "127.0.0.1";
            return std::nullopt;
          }};
}
std::map<std::string, std::string> as_map(const TaskEnv& t) { return {t.vars.begin(), t.vars.end()}; }
}  // namespace

TEST_CASE("a Slurm task gets torch's variables, a derived port and its GPU") {
  Env env = {{"SLURM_JOB_ID", "4242"},          {"SLURM_STEP_ID", "0"},          {"SLURM_PROCID", "3"},
             {"SLURM_LOCALID", "1"},            {"SLURM_NODEID", "1"},           {"SLURM_STEP_NUM_TASKS", "4"},
             {"SLURM_STEP_NUM_NODES", "2"},     {"SLURM_STEP_TASKS_PER_NODE", "2(x2)"},
             {"SLURM_STEP_NODELIST", "n[1-2]"}, {"SLURM_JOB_NODELIST", "n[1-2]"}, {"CUDA_VISIBLE_DEVICES", "0,1,2,3"},
             {"HPCLAUNCH_GPU_BIND", "local-rank"}};
  TaskEnv t = compute_task_env(env, {}, fake_effects());
  auto v = as_map(t);
  CHECK(v["RANK"] == "3");
  // Bound to one GPU, the task sees it as device 0: LOCAL_RANK is 0 so that a seed's
  // torch.cuda.set_device(local_rank) works (torchrun --virtual-local-rank); the node-local rank stays visible.
  CHECK(v["LOCAL_RANK"] == "0");
  CHECK(v["HPCLAUNCH_NODE_LOCAL_RANK"] == "1");
  CHECK(v["WORLD_SIZE"] == "4");
  CHECK(v["LOCAL_WORLD_SIZE"] == "2");
  CHECK(v["GROUP_RANK"] == "1");
  CHECK(v["GROUP_WORLD_SIZE"] == "2");
  CHECK(v["MASTER_ADDR"] == "n1");
  CHECK(v["MASTER_PORT"] == "24242");
  CHECK(v["CUDA_VISIBLE_DEVICES"] == "1");
  CHECK(v["HPCLAUNCH_JOB_ID"] == "4242");  // the neutral names of the job's place (dialect/in_job.h)
  CHECK(v["HPCLAUNCH_NODE_RANK"] == "1");
  CHECK(t.notes.empty());
  TaskEnvOptions flags;
  flags.gpu_bind = GpuBind::none;
  flags.master_port = 29400;
  v = as_map(compute_task_env(env, flags, fake_effects()));
  CHECK(v.count("CUDA_VISIBLE_DEVICES") == 0);
  CHECK(v["LOCAL_RANK"] == "1");  // unbound: the node's GPUs, indexed by LOCAL_RANK as in the seeds
  CHECK(v["MASTER_PORT"] == "29400");
}

TEST_CASE("an existing MASTER_ADDR spares reading the node lists (PBS_NODEFILE is only on the first host)") {
  Env env = {{"OMPI_COMM_WORLD_RANK", "5"}, {"OMPI_COMM_WORLD_SIZE", "8"}, {"OMPI_COMM_WORLD_LOCAL_RANK", "1"},
             {"OMPI_COMM_WORLD_LOCAL_SIZE", "4"}, {"PBS_JOBID", "12.pbshost"},
             {"PBS_NODEFILE", "/var/spool/pbs/aux/12.pbshost"}, {"MASTER_ADDR", "cn01"}};
  auto v = as_map(compute_task_env(env, {}, fake_effects()));  // fake_effects has no files: reading would throw
  CHECK(v["MASTER_ADDR"] == "cn01");
  CHECK(v["MASTER_PORT"] == "20012");
  CHECK(v["GROUP_RANK"] == "1");
}

TEST_CASE("a plain shell is a world of one on loopback, with a note") {
  TaskEnv t = compute_task_env({}, {}, fake_effects());
  auto v = as_map(t);
  CHECK(v["WORLD_SIZE"] == "1");
  CHECK(v["MASTER_ADDR"] == "127.0.0.1");
  CHECK(v["MASTER_PORT"] == "29500");
  REQUIRE(t.notes.size() == 1);
  CHECK(t.notes[0].find("world of one") != std::string::npos);
}

TEST_CASE("the local emulation uses its fixed loopback address") {
  Env env = {{"HPCLAUNCH_LOCAL_JOB", "1"},       {"HPCLAUNCH_JOB_ID", "local-1-2"},  {"HPCLAUNCH_NODELIST", "node[0-1]"},
             {"HPCLAUNCH_NNODES", "2"},          {"HPCLAUNCH_NODE_RANK", "0"},       {"HPCLAUNCH_NTASKS", "2"},
             {"HPCLAUNCH_TASKS_PER_NODE", "1"},  {"HPCLAUNCH_TASK_RANK", "0"},       {"HPCLAUNCH_TASK_LOCAL_RANK", "0"},
             {"HPCLAUNCH_MASTER_ADDR_RULE", "fixed"}, {"HPCLAUNCH_MASTER_ADDR_FIXED", "127.0.0.1"}};
  auto v = as_map(compute_task_env(env, {}, fake_effects()));
  CHECK(v["MASTER_ADDR"] == "127.0.0.1");
  CHECK(v["MASTER_PORT"] == std::to_string(derive_master_port("local-1-2")));
}

TEST_CASE("mpirun on one host with no node list: every rank on loopback, one note (rank 0's); several hosts: an error") {
  auto ompi = [](int rank, int size, int local_size) {
    return Env{{"OMPI_COMM_WORLD_RANK", std::to_string(rank)}, {"OMPI_COMM_WORLD_SIZE", std::to_string(size)},
               {"OMPI_COMM_WORLD_LOCAL_RANK", std::to_string(rank % local_size)},
               {"OMPI_COMM_WORLD_LOCAL_SIZE", std::to_string(local_size)}};
  };
  TaskEnv t0 = compute_task_env(ompi(0, 2, 2), {}, fake_effects());
  CHECK(as_map(t0)["MASTER_ADDR"] == "127.0.0.1");
  REQUIRE(t0.notes.size() == 1);
  CHECK(t0.notes[0] == "MASTER_ADDR=127.0.0.1: open-mpi puts all 2 ranks on this host and no node list names another "
                       "(export MASTER_ADDR to choose one)");
  TaskEnv t1 = compute_task_env(ompi(1, 2, 2), {}, fake_effects());
  CHECK(as_map(t1)["MASTER_ADDR"] == "127.0.0.1");
  CHECK(t1.notes.empty());
  // Two hosts (local size 2 of 4) and no rule's list: still refused.
  CHECK_THROWS_WITH_AS(compute_task_env(ompi(0, 4, 2), {}, fake_effects()),
                       doctest::Contains("MASTER_ADDR: unset, and the first-node rule has no node list"), Error);
  // One host, but a node list the rule can use: the rule's host, as before.
  Env in_job = ompi(0, 2, 2);
  in_job["SLURM_JOB_ID"] = "5";
  in_job["SLURM_JOB_NODELIST"] = "n1";
  CHECK(as_map(compute_task_env(in_job, {}, fake_effects()))["MASTER_ADDR"] == "n1");
  // PMI (Hydra) and PALS say the same with their own variables.
  Env hydra = {{"PMI_RANK", "0"}, {"PMI_SIZE", "3"}, {"MPI_LOCALRANKID", "0"}, {"MPI_LOCALNRANKS", "3"}};
  CHECK(as_map(compute_task_env(hydra, {}, fake_effects()))["MASTER_ADDR"] == "127.0.0.1");
  Env pals = {{"PALS_RANKID", "1"}, {"PALS_LOCAL_RANKID", "1"}, {"PMI_SIZE", "2"}, {"PALS_LOCAL_SIZE", "2"}};
  CHECK(as_map(compute_task_env(pals, {}, fake_effects()))["MASTER_ADDR"] == "127.0.0.1");
}

TEST_SUITE_END();

}  // namespace task_env_test
