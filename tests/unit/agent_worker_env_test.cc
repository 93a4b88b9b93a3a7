// A worker's environment and command line (agent/worker_env.h): torchrun's variables for its place in the round,
// python run unbuffered, --virtual-local-rank.
#include <doctest/doctest.h>

#include <csignal>

#include "agent/worker_env.h"
#include "util/error.h"

namespace agent_worker_env_test {  // this file's names, apart from its unity batch's others (tests/CMakeLists.txt)

using namespace hpclaunch;

TEST_SUITE_BEGIN("agent worker env");

TEST_CASE("a worker gets torchrun's variables for its place in the round") {
  Env base = {{"PATH", "/bin"}, {"CUDA_VISIBLE_DEVICES", "0,1"}};
  WorkerLayout layout{"job42", "default", 2, 3, 8};
  Assignment a{0, 1, 2, 2, 4, 1, "n1", 31234};
  Env env = worker_env(base, layout, a, 1, "/tmp/e.json");
  CHECK(env["RANK"] == "3");
  CHECK(env["LOCAL_RANK"] == "1");
  CHECK(env["WORLD_SIZE"] == "4");
  CHECK(env["LOCAL_WORLD_SIZE"] == "2");
  CHECK(env["GROUP_RANK"] == "1");
  CHECK(env["GROUP_WORLD_SIZE"] == "2");
  CHECK(env["ROLE_NAME"] == "default");
  CHECK(env["ROLE_RANK"] == "3");
  CHECK(env["ROLE_WORLD_SIZE"] == "4");
  CHECK(env["MASTER_ADDR"] == "n1");
  CHECK(env["MASTER_PORT"] == "31234");
  CHECK(env["TORCHELASTIC_RESTART_COUNT"] == "1");
  CHECK(env["TORCHELASTIC_MAX_RESTARTS"] == "3");
  CHECK(env["TORCHELASTIC_RUN_ID"] == "job42");
  CHECK(env["TORCHELASTIC_USE_AGENT_STORE"] == "False");
  CHECK(env["TORCHELASTIC_ERROR_FILE"] == "/tmp/e.json");
  CHECK(env["OMP_NUM_THREADS"] == "8");
  CHECK(env["CUDA_VISIBLE_DEVICES"] == "0,1");
  CHECK(env["PATH"] == "/bin");
}

TEST_CASE("OMP_NUM_THREADS and PYTHONUNBUFFERED already set are kept") {
  Env base = {{"OMP_NUM_THREADS", "3"}, {"PYTHONUNBUFFERED", "0"}};
  Env env = worker_env(base, WorkerLayout{}, Assignment{}, 0, "e");
  CHECK(env["OMP_NUM_THREADS"] == "3");
  CHECK(env["PYTHONUNBUFFERED"] == "0");
  CHECK(omp_threads_per_worker(64, 4) == 16);
  CHECK(omp_threads_per_worker(2, 4) == 1);
}

TEST_CASE("python scripts and modules run unbuffered with python, other commands as they are") {
  WorkerCommand c;
  c.args = {"train.py", "--lr", "1"};
  CHECK(worker_argv(c) == std::vector<std::string>{"python3", "-u", "train.py", "--lr", "1"});
  c.no_python = true;
  CHECK(worker_argv(c) == std::vector<std::string>{"train.py", "--lr", "1"});
  c.no_python = false;
  c.module = true;
  c.args = {"pkg.train"};
  CHECK(worker_argv(c) == std::vector<std::string>{"python3", "-u", "-m", "pkg.train"});
  c.module = false;
  c.args = {"hpclaunch-train", "--epochs", "1"};
  CHECK(worker_argv(c) == c.args);
}

TEST_CASE("--virtual-local-rank: each worker sees its own GPU as device 0 and LOCAL_RANK 0, as torchrun 2.x") {
  WorkerLayout layout{"j", "default", 2, 0, 1, true};
  Env env = worker_env({{"CUDA_VISIBLE_DEVICES", "4, 6"}}, layout, Assignment{}, 1, "e");
  CHECK(env["LOCAL_RANK"] == "0");
  CHECK(env["CUDA_VISIBLE_DEVICES"] == "6");
  CHECK(worker_env({}, layout, Assignment{}, 1, "e")["CUDA_VISIBLE_DEVICES"] == "1");
  CHECK_THROWS_WITH(worker_env({{"CUDA_VISIBLE_DEVICES", "0"}}, layout, Assignment{}, 1, "e"),
                    doctest::Contains("--virtual-local-rank: local rank 1 but CUDA_VISIBLE_DEVICES lists 1 device(s)"));
  // AMD: the node's list in ROCR_VISIBLE_DEVICES (Slurm's binding sets it); the worker's own device goes there, and
  // the HIP and CUDA lists, which number within that selection, say device 0 (not renumbered a second time).
  Env amd = worker_env({{"HPCLAUNCH_ACCELERATOR", "amd"}, {"ROCR_VISIBLE_DEVICES", "2,3,5"}}, layout, Assignment{}, 2, "e");
  CHECK(amd["LOCAL_RANK"] == "0");
  CHECK(amd["ROCR_VISIBLE_DEVICES"] == "5");
  CHECK(amd["HIP_VISIBLE_DEVICES"] == "0");
  CHECK(amd["HPCLAUNCH_NODE_LOCAL_RANK"] == "2");  // as exec's bound task: the preflight counts the node's GCDs
  // Intel: Level Zero's mask, one tile each.
  Env intel = worker_env({{"HPCLAUNCH_ACCELERATOR", "intel"}, {"ZE_AFFINITY_MASK", "0.0,0.1,1.0"}}, layout,
                         Assignment{}, 1, "e");
  CHECK(intel["ZE_AFFINITY_MASK"] == "0.1");
  CHECK(intel.count("CUDA_VISIBLE_DEVICES") == 0);
  Env plain = worker_env({{"CUDA_VISIBLE_DEVICES", "4,6"}}, WorkerLayout{}, Assignment{}, 1, "e");
  CHECK(plain["LOCAL_RANK"] == "1");
  CHECK(plain.count("HPCLAUNCH_NODE_LOCAL_RANK") == 0);
  CHECK(plain["CUDA_VISIBLE_DEVICES"] == "4,6");
  CHECK(plain["TORCH_NCCL_ASYNC_ERROR_HANDLING"] == "1");
  CHECK(plain.count("NCCL_ASYNC_ERROR_HANDLING") == 0);  // torchrun 1.x's name: torch 2.x warns that it is deprecated
}

TEST_CASE("TORCHELASTIC_SIGNALS_TO_HANDLE names the signals the agent passes on, as torchrun 2.x's launcher") {
  WorkerLayout layout;
  layout.signals = {SIGTERM, SIGUSR2};
  CHECK(worker_env({}, layout, Assignment{}, 0, "e")["TORCHELASTIC_SIGNALS_TO_HANDLE"] == "SIGTERM,SIGUSR2");
  CHECK(worker_env({{"TORCHELASTIC_SIGNALS_TO_HANDLE", "SIGINT"}}, layout, Assignment{}, 0, "e")
            ["TORCHELASTIC_SIGNALS_TO_HANDLE"] == "SIGTERM,SIGUSR2");  // what the agent does, whatever it inherited
  CHECK(worker_env({}, WorkerLayout{}, Assignment{}, 0, "e").count("TORCHELASTIC_SIGNALS_TO_HANDLE") == 0);
}

TEST_SUITE_END();

}  // namespace agent_worker_env_test

namespace agent_worker_env_test {

TEST_CASE("with a hang watch the workers get torch's flight recorder, unless the user set it, old names too") {
  WorkerLayout layout;
  layout.flight_recorder_prefix = "/jobs/1/stacks/attempt_0/nccl_trace_rank_";
  Env env = worker_env({}, layout, Assignment{}, 0, "e");
  CHECK(env["TORCH_FR_BUFFER_SIZE"] == "2000");
  CHECK(env["TORCH_FR_DUMP_ON_TIMEOUT"] == "1");
  CHECK(env["TORCH_FR_DUMP_TEMP_FILE"] == "/jobs/1/stacks/attempt_0/nccl_trace_rank_");
  Env mine = worker_env({{"TORCH_NCCL_TRACE_BUFFER_SIZE", "0"}, {"TORCH_FR_DUMP_TEMP_FILE", "/x/"}}, layout,
                        Assignment{}, 0, "e");
  CHECK_FALSE(mine.count("TORCH_FR_BUFFER_SIZE"));
  CHECK(mine["TORCH_NCCL_TRACE_BUFFER_SIZE"] == "0");
  CHECK(mine["TORCH_FR_DUMP_TEMP_FILE"] == "/x/");
  CHECK(mine["TORCH_FR_DUMP_ON_TIMEOUT"] == "1");
  Env none = worker_env({}, WorkerLayout{}, Assignment{}, 0, "e");
  CHECK_FALSE(none.count("TORCH_FR_BUFFER_SIZE"));
}

}  // namespace agent_worker_env_test
