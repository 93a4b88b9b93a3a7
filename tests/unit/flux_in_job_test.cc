// Flux's in-job face (launcher/schedulers/flux/in_job.cc) on the environments the stand-in `flux`
// (tests/schedulers/flux/) gives a batch script and the tasks of its `flux run`, as flux-environment(7) says.
#include <doctest/doctest.h>

#include <map>

#include "dialect/in_job.h"
#include "runtime/ranks.h"
#include "runtime/task_env.h"
#include "schedulers/flux/dialect.h"
#include "test_util.h"

namespace flux_in_job_test {  // this file's names, apart from its unity batch's others (tests/CMakeLists.txt)

using namespace hpclaunch;

namespace {

// A batch script's environment, as the stand-in gave it: the instance and the batch job, no FLUX_JOB_*.
const Env k_batch = {{"FLUX_URI", "local:///tmp/st/system/jobs/16777216/instance/local"},
                     {"FLUX_ENCLOSING_ID", "\xc6\x92" "2UzHM"},
                     {"FLUX_JOB_ID_PATH", "/\xc6\x92" "2UzHM"},
                     {"CUDA_VISIBLE_DEVICES", "-1"}};

// Task 5 of `flux run -N 2 -n 8` in that batch job: node 1's second task.
Env task(int rank, int local, int size = 8, int nodes = 2) {
  Env env = k_batch;
  env["FLUX_JOB_ID"] = "\xc6\x92" "H43DyZ";  // the step's own id
  env["FLUX_TASK_RANK"] = std::to_string(rank);
  env["FLUX_TASK_LOCAL_ID"] = std::to_string(local);
  env["FLUX_JOB_SIZE"] = std::to_string(size);
  env["FLUX_JOB_NNODES"] = std::to_string(nodes);
  return env;
}

const InJobFace& face() { return flux_dialect().in_job(); }

}  // namespace

TEST_SUITE_BEGIN("flux_in_job");

TEST_CASE("a Flux batch script: the batch job's id from FLUX_ENCLOSING_ID, no nodes but through flux hostlist") {
  REQUIRE(job_face(k_batch) == &face());
  CHECK(std::string(face().name()) == "flux");
  CHECK(face().inside(k_batch));
  CHECK_FALSE(face().inside({{"FLUX_URI", "local:///run/flux/local"}}));  // a login node's shell: no job
  CHECK(face().job_id(k_batch) == "\xc6\x92" "2UzHM");
  CHECK_FALSE(face().array_task(k_batch));
  CHECK(face().job_nodes(k_batch, {}).empty());
  CHECK(face().node_list_command(k_batch) == std::vector<std::string>{"flux", "hostlist", "local"});
  CHECK(face().parse_node_list("node[0-1]\n") == std::vector<std::string>{"node0", "node1"});
  std::vector<std::vector<std::string>> asked;
  CommandReader flux = [&](const std::vector<std::string>& argv) {
    asked.push_back(argv);
    return std::string("elcap[1001-1002]\n");
  };
  CHECK(job_nodes(k_batch, {}, flux) == std::vector<std::string>{"elcap1001", "elcap1002"});
  CHECK(asked == std::vector<std::vector<std::string>>{{"flux", "hostlist", "local"}});
  CHECK(face().gpu_count(k_batch) == 0);  // CUDA_VISIBLE_DEVICES=-1: Flux's "no GPU here"
  CHECK_FALSE(face().launcher_ranks(k_batch));
  TaskRanks batch = detect_task_ranks(k_batch, {});
  CHECK((batch.source == RankSource{RankKind::batch, "flux-batch"}));
  CHECK(batch.world_size == 1);
  CHECK(batch.note.find("not a task of `flux run`") != std::string::npos);
  // What Flux cannot do here: none of the capabilities' record.
  CHECK(job_dialect(k_batch) == &dialect_for(Scheduler::flux));
  CHECK(capability_names(job_dialect(k_batch)->capabilities()).empty());
}

TEST_CASE("a task of flux run: its ranks from FLUX_TASK_*, the job is still the batch job") {
  Env env = task(5, 1);
  REQUIRE(job_face(env) == &face());
  CHECK(face().job_id(env) == "\xc6\x92" "2UzHM");
  auto r = face().launcher_ranks(env);
  REQUIRE(r);
  CHECK((r->source == RankSource{RankKind::step, "flux"}));
  CHECK(r->rank == 5);
  CHECK(r->world_size == 8);
  CHECK(r->local_rank == 1);
  CHECK(r->local_world_size == 4);
  CHECK(r->node_rank == 1);
  CHECK(r->num_nodes == 2);
  CHECK(r->job_id == "\xc6\x92" "H43DyZ");  // the launcher's own: the step
  TaskRanks detected = detect_task_ranks(env, {});
  CHECK(detected.rank == 5);
  CHECK(detected.source.name == "flux");

  // A task of a job run straight from the system instance: it is the job.
  Env alone = env;
  alone.erase("FLUX_ENCLOSING_ID");
  CHECK(face().job_id(alone) == "\xc6\x92" "H43DyZ");

  // The workers' variables: MASTER_ADDR the first node `flux hostlist local` names, RANK and WORLD_SIZE Flux's.
  CommandReader flux = [](const std::vector<std::string>&) { return std::string("node[0-1]\n"); };
  auto resolve = [](const std::string& host) { return host == "node0" ? std::optional<std::string>("10.0.0.1") : std::nullopt; };
  TaskEnv vars = compute_task_env(env, {}, TaskEnvEffects{{}, resolve, flux});
  std::map<std::string, std::string> set(vars.vars.begin(), vars.vars.end());
  CHECK(set["RANK"] == "5");
  CHECK(set["WORLD_SIZE"] == "8");
  CHECK(set["LOCAL_RANK"] == "1");
  CHECK(set["MASTER_ADDR"] == "node0");
}

TEST_CASE("a Flux task's numbers that do not fit are one line naming the variables") {
  CHECK(test::error_of_call([] { face().launcher_ranks(task(8, 0)); }) ==
        "Flux task: FLUX_TASK_RANK=8 is not below FLUX_JOB_SIZE=8; " + std::string(k_launcher_fix));
  CHECK(test::error_of_call([] { face().launcher_ranks(task(4, 0, 5, 2)); }) ==
        "FLUX_JOB_SIZE: 5 tasks on FLUX_JOB_NNODES=2 nodes are not the same number on each node, so a task's local "
        "world size is unknown; start the same number of tasks on every node (flux run -N NODES -n NODES*K)");
  CHECK(test::error_of_call([] { face().launcher_ranks(task(5, 0)); }).find("--taskmap=cyclic?") != std::string::npos);
  Env missing = task(0, 0);
  missing.erase("FLUX_JOB_SIZE");
  CHECK(test::error_of_call([&] { face().launcher_ranks(missing); }).find("FLUX_JOB_SIZE") != std::string::npos);
}

TEST_CASE("Flux inside a Slurm allocation: Flux's face is asked first") {
  Env both = task(0, 0);
  both["SLURM_JOB_ID"] = "77";
  both["SLURM_NNODES"] = "2";
  REQUIRE(job_face(both) == &face());
  CHECK(job_id(both) == "\xc6\x92" "2UzHM");
  both.erase("FLUX_ENCLOSING_ID");
  both.erase("FLUX_JOB_ID");
  CHECK(std::string(job_face(both)->name()) == "slurm");
}

TEST_SUITE_END();

}  // namespace flux_in_job_test
