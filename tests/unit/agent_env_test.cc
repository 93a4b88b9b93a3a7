#include <doctest/doctest.h>

#include "agent/agent_options.h"
#include "agent/failure.h"
#include "agent/job_environment.h"
#include "util/line_splitter.h"
#include "agent/worker_env.h"
#include "util/error.h"

using namespace hpclaunch;

TEST_SUITE_BEGIN("agent env");

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

namespace {

AgentOptions parse(std::vector<std::string> args, Env env = {}, JobEnvironment job = {}) {
  MachineInfo m{"host1", 8, 0};
  AgentOptions o;
  std::string help;
  REQUIRE(parse_agent_options(args, env, job, m, &o, &help));
  return o;
}

}  // namespace

TEST_CASE("flags take torchrun's spellings and the command follows -- or the first word") {
  auto o = parse({"--nnodes", "1:3", "--nproc_per_node", "2", "--rdzv-endpoint", "h:123", "--node-rank", "1",
                  "--max-restarts", "2", "--", "train.py", "--x"},
                 {{"HPCLAUNCH_RDZV_SECRET", "s"}});
  CHECK(o.min_nodes == 1);
  CHECK(o.max_nodes == 3);
  CHECK(o.nproc == 2);
  CHECK(o.rdzv_host == "h");
  CHECK(o.rdzv_port == 123);
  CHECK(o.node_rank == 1);
  CHECK(o.max_restarts == 2);
  CHECK(o.command.args == std::vector<std::string>{"train.py", "--x"});
  o = parse({"--standalone", "--nproc-per-node", "cpu", "train.py", "--nnodes", "5"});
  CHECK(o.nproc == 8);
  CHECK(o.command.args == std::vector<std::string>{"train.py", "--nnodes", "5"});
  o = parse({"-m", "pkg.mod", "--", "a"});
  CHECK(o.command.module);
  CHECK(o.command.args == std::vector<std::string>{"pkg.mod", "a"});
}

TEST_CASE("torchrun's rendezvous backend and no-effect flags are accepted in both spellings and forms") {
  auto o = parse({"--rdzv_backend=c10d", "--monitor-interval", "0.1", "--start_method=fork",
                  "--event-log-handler", "null", "--standalone", "train.py"});
  CHECK(o.standalone);
  CHECK(o.command.args == std::vector<std::string>{"train.py"});
  o = parse({"--rdzv-backend", "c10d", "--monitor_interval=5", "--standalone", "--", "t.py"});
  CHECK(o.command.args == std::vector<std::string>{"t.py"});
}

TEST_CASE("--rdzv-conf keys set the agent's timeouts") {
  auto o = parse({"--rdzv_conf=join_timeout=90,last_call_timeout=7,is_host=true,read_timeout=60",
                  "--standalone", "x"});
  CHECK(o.join_timeout_s == 90);
  CHECK(o.last_call_s == 7);
  o = parse({"--rdzv-conf", "timeout=30,keep_alive_interval=2", "--standalone", "x"});
  CHECK(o.join_timeout_s == 30);
  CHECK(o.heartbeat_timeout_s == 6);
}

TEST_CASE("inside a job the defaults come from the allocation") {
  JobEnvironment job;
  job.source = "slurm";
  job.nnodes = 2;
  job.node_rank = 1;
  job.job_id = "4242";
  job.node_name = "n2";
  job.gpus = 4;
  job.master_addr = "n1";
  job.rendezvous_port = 24242;
  auto o = parse({"--", "train.py"}, {{"HPCLAUNCH_RDZV_SECRET", "s"}}, job);
  CHECK(o.min_nodes == 2);
  CHECK(o.max_nodes == 2);
  CHECK(o.node_rank == 1);
  CHECK(o.nproc == 4);
  CHECK(o.rdzv_host == "n1");
  CHECK(o.rdzv_port == 24242);
  CHECK(o.rdzv_id == "4242");
  CHECK(o.host == "n2");
  CHECK(o.secret == "s");
}

TEST_CASE("bad flags name the flag") {
  MachineInfo m{"h", 2, 0};
  AgentOptions o;
  std::string help;
  auto fails = [&](std::vector<std::string> args, const char* want, Env env = {{"HPCLAUNCH_RDZV_SECRET", "s"}}) {
    try {
      parse_agent_options(args, env, JobEnvironment{}, m, &o, &help);
      FAIL("no error for " << want);
    } catch (const Error& e) {
      CHECK_MESSAGE(std::string(e.what()).find(want) != std::string::npos, e.what());
    }
  };
  fails({"--nnodes", "3:2", "--", "x"}, "--nnodes: MIN 3 is more than MAX 2");
  fails({"--nproc-per-node", "gpu", "--", "x"}, "no GPU is visible");
  fails({"--nnodes", "2", "--rdzv-endpoint", "h:1", "--", "x"}, "--node-rank: not given");
  fails({"--nnodes", "2", "--rdzv-endpoint", "h:1", "--node-rank", "0", "--", "x"}, "HPCLAUNCH_RDZV_SECRET", {});
  fails({"--tee", "5", "--", "x"}, "--tee: '5' is not 0-3");
  fails({"--nnodes", "2"}, "no command to run");
  fails({"--rdzv_backend=etcd", "--standalone", "x"}, "--rdzv-backend: 'etcd' needs an etcd server");
  fails({"--rdzv-backend", "etcd-v2", "--standalone", "x"}, "use --rdzv-backend c10d");
  fails({"--rdzv-backend", "zmq", "--standalone", "x"}, "--rdzv-backend: 'zmq' is not supported");
  fails({"--start-method", "thread", "--standalone", "x"}, "start-method");
  fails({"--rdzv-conf", "foo=1", "--standalone", "x"}, "--rdzv-conf: unknown key 'foo'");
  fails({"--rdzv-conf", "join_timeout=-3", "--standalone", "x"}, "join_timeout=-3 is not a positive");
  fails({"--rdzv-conf", "is_host=maybe", "--standalone", "x"}, "is_host=maybe is not true or false");
  fails({"--nnode", "2", "--", "x"}, "unknown flag '--nnode' (did you mean '--nnodes'?)");
}

TEST_CASE("redirect specs give each local rank its streams") {
  CHECK(stream_mask("3", 5) == 3);
  CHECK(stream_mask("0:1,1:2", 1) == 2);
  CHECK(stream_mask("0:1,1:2", 2) == 0);
  CHECK(count_device_list("0,1,3") == 3);
  CHECK(count_device_list("") == 0);
}

TEST_CASE("the summary names host, rank, local rank and exit code or signal name") {
  Failure f;
  f.host = "n2";
  f.rank = 3;
  f.local_rank = 1;
  f.exit_code = 1;
  CHECK(describe(f) == "rank 3 (local rank 1) on n2 exited with code 1");
  f.signal = 9;
  CHECK(describe(f) == "rank 3 (local rank 1) on n2 was killed by SIGKILL");
  f.error = "ValueError: bad\nline 2";
  CHECK(format_summary(f, 1, 2) ==
        "root cause: rank 3 (local rank 1) on n2 was killed by SIGKILL (after 1 of 2 restarts)\n"
        "error file of rank 3:\n  ValueError: bad\n  line 2");
  Failure lost;
  lost.reason = "the agent on n2 (node 1) was lost";
  CHECK(format_summary(lost, 0, 0) == "root cause: the agent on n2 (node 1) was lost");
}

TEST_CASE("TorchElastic error files are summarised to message and traceback") {
  CHECK(summarize_error_file(R"({"message": {"message": "RuntimeError: boom", "extraInfo": )"
                             R"({"py_callstack": "Traceback...\n  raise\n", "timestamp": "1"}}})") ==
        "RuntimeError: boom\nTraceback...\n  raise");
  CHECK(summarize_error_file(R"({"message": "plain"})") == "plain");
  CHECK(summarize_error_file("not json") == "not json");
  CHECK(summarize_error_file("0123456789", 4) == "...6789");
}

TEST_CASE("output is cut into whole lines, long ones in pieces") {
  std::vector<std::string> lines;
  auto emit = [&](std::string_view l) { lines.emplace_back(l); };
  LineSplitter s(8);
  s.feed("ab", emit);
  s.feed("c\nde\n\nf", emit);
  CHECK(lines == std::vector<std::string>{"abc", "de", ""});
  s.feed("0123456789", emit);
  CHECK(lines.back() == "f0123456");
  s.finish(emit);
  CHECK(lines.back() == "789");
}

