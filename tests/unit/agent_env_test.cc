#include <doctest/doctest.h>

#include <csignal>

#include <nlohmann/json.hpp>

#include "agent/agent_options.h"
#include "agent/failure.h"
#include "agent/job_environment.h"
#include "agent/numa_binding.h"
#include "agent/numa_topology.h"
#include "util/line_splitter.h"
#include "agent/worker_env.h"
#include "cli/cmd_agent.h"
#include "util/error.h"
#include "test_util.h"

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

// The command line as `hpclaunch agent` (or torchrun) reads it: the flags (cli/cmd_agent.cc), then the decisions.
AgentOptions agent_options_of(const std::vector<std::string>& args, const Env& env, const JobEnvironment& job,
                              const MachineInfo& m, AgentFace face = AgentFace::agent) {
  AgentFlags flags;
  std::string help;
  if (!parse_agent_flags(args, face, &flags, &help)) FAIL("--help was asked");  // errors throw on to the caller
  return resolve_agent_options(flags, env, job, m, face);
}

AgentOptions parse(std::vector<std::string> args, Env env = {}, JobEnvironment job = {}) {
  return agent_options_of(args, env, job, MachineInfo{"host1", 8, 0});
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
  auto fails = [&](std::vector<std::string> args, const char* want, Env env = {{"HPCLAUNCH_RDZV_SECRET", "s"}}) {
    std::string error = test::error_of_call([&] { agent_options_of(args, env, JobEnvironment{}, m); });
    CHECK_MESSAGE(error.find(want) != std::string::npos, error);
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
  fails({"--nnode", "2", "--", "x"}, "--nnode: unknown option (did you mean '--nnodes'?); see `hpclaunch agent --help`");
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
  // A worker's file of any shape is summarized, never thrown on (t0065's failure_record found these).
  CHECK(summarize_error_file(R"({"message": 5})") == R"({"message": 5})");
  CHECK(summarize_error_file(R"({"message": {"message": 7, "extraInfo": {"py_callstack": []}}})").empty());
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

TEST_SUITE_BEGIN("agent env");

namespace {

AgentOptions parse_torchrun(std::vector<std::string> args, Env env = {}, JobEnvironment job = {}) {
  return agent_options_of(args, env, job, MachineInfo{"host1", 8, 0}, AgentFace::torchrun);
}

std::string parse_error(std::vector<std::string> args, AgentFace face = AgentFace::agent) {
  return test::error_of_call(
      [&] { agent_options_of(args, {{"HPCLAUNCH_RDZV_SECRET", "s"}}, {}, MachineInfo{"h", 2, 0}, face); });
}

}  // namespace

TEST_CASE("torchrun 2.x flags: static rendezvous from --master-addr/--master-port, local addr, signals, virtual local rank") {
  auto o = parse({"--rdzv_backend=static", "--master_addr=n1", "--master-port", "29500", "--nnodes=2", "--node_rank=1",
                  "--local-addr", "10.0.0.2", "--signals_to_handle=SIGTERM,INT", "--virtual-local-rank", "--run-path",
                  "--logs-specs", "default", "train.py"},
                 {{"HPCLAUNCH_RDZV_SECRET", "s"}});
  CHECK(o.rdzv_host == "n1");
  CHECK(o.rdzv_port == 29500);
  CHECK(o.node_rank == 1);
  CHECK(o.local_addr == "10.0.0.2");
  CHECK(o.signals == std::vector<int>{SIGTERM, SIGINT});
  CHECK(o.virtual_local_rank);
  CHECK(o.command.args == std::vector<std::string>{"train.py"});
  CHECK_FALSE(o.command.always_python);
  auto e = parse({"--rdzv-endpoint", "h:1", "--master-addr", "n9", "--nnodes", "2", "--node-rank", "0", "x"},
                 {{"HPCLAUNCH_RDZV_SECRET", "s"}});
  CHECK(e.rdzv_host == "h");  // --rdzv-endpoint wins, as torchrun's c10d
}

TEST_CASE("torchrun 2.x flags that cannot be honoured are refused naming the flag and the fix") {
  CHECK(parse_error({"--rdzv-backend", "static", "--nnodes", "1:2", "--master-addr", "h", "--master-port", "1", "x"})
            .find("--rdzv-backend: static takes a fixed number of nodes") != std::string::npos);
  CHECK(parse_error({"--master-port", "1", "--standalone", "x"}).find("--master-port: given without --master-addr") !=
        std::string::npos);
  CHECK(parse_error({"--signals-to-handle", "SIGTERM,SIGBOGUS", "--standalone", "x"})
            .find("--signals-to-handle: 'BOGUS' is not a signal a job can catch") != std::string::npos);
  CHECK(parse_error({"--numa-binding", "nodes", "--standalone", "x"}).find("--numa-binding: 'nodes' is not a binding") !=
        std::string::npos);
  CHECK(parse_error({"--logs-specs", "my.plugin", "--standalone", "x"}).find("--logs-specs: 'my.plugin'") !=
        std::string::npos);
  CHECK(parse_error({"--bogus", "x"}, AgentFace::torchrun) == "--bogus: unknown option; see `torchrun --help`");
}

TEST_CASE("the torchrun face: the script and everything after it are the script's, run with python, no secret needed") {
  JobEnvironment job;
  job.nnodes = 2;
  job.node_rank = 0;
  job.master_addr = "n1";
  job.rendezvous_port = 24242;
  auto o = parse_torchrun({"--nnodes=2", "--nproc_per_node=4", "main.py", "--batch_size=6144", "--", "--ddp"}, {}, job);
  CHECK(o.command.args == std::vector<std::string>{"main.py", "--batch_size=6144", "--", "--ddp"});
  CHECK(o.command.always_python);
  CHECK(worker_argv(o.command) == std::vector<std::string>{"python3", "-u", "main.py", "--batch_size=6144", "--", "--ddp"});
  // torchrun's store authenticates no one; the face's shared word keeps jobs apart (`hpclaunch agent` would refuse).
  CHECK(o.secret == "torchrun-face:none@n1:24242");
  o = parse_torchrun({"--standalone", "--", "script", "a"});
  CHECK(o.command.args == std::vector<std::string>{"script", "a"});
  CHECK(worker_argv(o.command) == std::vector<std::string>{"python3", "-u", "script", "a"});
  o = parse_torchrun({"--standalone", "--no-python", "bash", "-c", "true"});
  CHECK(worker_argv(o.command) == std::vector<std::string>{"bash", "-c", "true"});
}

TEST_CASE("--rdzv-conf use_libuv=false: the workers get USE_LIBUV=0 unless the agent's environment sets it") {
  CHECK(parse({"--standalone", "x"}).use_libuv);
  CHECK_FALSE(parse({"--rdzv-conf", "use_libuv=False", "--standalone", "x"}).use_libuv);
  CHECK_FALSE(parse({"--rdzv-conf", "use_libuv=0", "--standalone", "x"}).use_libuv);
  CHECK(parse({"--rdzv-conf", "use_libuv=1", "--standalone", "x"}).use_libuv);
  CHECK_FALSE(parse({"--rdzv-conf", "use_libuv=N", "--standalone", "x"}).use_libuv);  // torchrun: any case, t/f/y/n
  CHECK(parse({"--rdzv-conf", "use_libuv=TRUE", "--standalone", "x"}).use_libuv);
  CHECK_THROWS_WITH(parse({"--rdzv-conf", "use_libuv=maybe", "--standalone", "x"}),
                    doctest::Contains("--rdzv-conf: use_libuv=maybe is not true or false"));
  WorkerLayout layout;
  CHECK(worker_env({}, layout, Assignment{}, 0, "e").count("USE_LIBUV") == 0);
  layout.use_libuv = false;
  CHECK(worker_env({}, layout, Assignment{}, 0, "e")["USE_LIBUV"] == "0");
  CHECK(worker_env({{"USE_LIBUV", "1"}}, layout, Assignment{}, 0, "e")["USE_LIBUV"] == "1");
}

TEST_CASE("--virtual-local-rank: each worker sees its own GPU as device 0 and LOCAL_RANK 0, as torchrun 2.x") {
  WorkerLayout layout{"j", "default", 2, 0, 1, true};
  Env env = worker_env({{"CUDA_VISIBLE_DEVICES", "4, 6"}}, layout, Assignment{}, 1, "e");
  CHECK(env["LOCAL_RANK"] == "0");
  CHECK(env["CUDA_VISIBLE_DEVICES"] == "6");
  CHECK(worker_env({}, layout, Assignment{}, 1, "e")["CUDA_VISIBLE_DEVICES"] == "1");
  CHECK_THROWS_WITH(worker_env({{"CUDA_VISIBLE_DEVICES", "0"}}, layout, Assignment{}, 1, "e"),
                    doctest::Contains("--virtual-local-rank: local rank 1 but CUDA_VISIBLE_DEVICES lists 1 device(s)"));
  Env plain = worker_env({{"CUDA_VISIBLE_DEVICES", "4,6"}}, WorkerLayout{}, Assignment{}, 1, "e");
  CHECK(plain["LOCAL_RANK"] == "1");
  CHECK(plain["CUDA_VISIBLE_DEVICES"] == "4,6");
  CHECK(plain["TORCH_NCCL_ASYNC_ERROR_HANDLING"] == "1");  // torchrun 2.x's name, beside 1.x's
  CHECK(plain["NCCL_ASYNC_ERROR_HANDLING"] == "1");
}

TEST_SUITE_END();

TEST_SUITE_BEGIN("agent env");

namespace {

// Two sockets, two NUMA nodes each of 4 CPUs, two L3 caches per node; GPUs 0-3 on nodes 0, 1, 2, 3.
Topology two_sockets() {
  Topology t;
  for (int n = 0; n < 4; ++n) {
    NumaDomain d;
    d.os_index = n;
    d.package = n / 2;
    for (int c = 4 * n; c < 4 * n + 4; ++c) d.cpus.push_back(c);
    d.l3 = {{4 * n, 4 * n + 1}, {4 * n + 2, 4 * n + 3}};
    t.domains.push_back(d);
  }
  return t;
}

}  // namespace

TEST_CASE("--numa-binding: each worker gets the CPUs near its GPU, by node, socket, share or L3 cache") {
  Topology t = two_sockets();
  t.gpu_numa = {3, 2, 1, 0};  // GPUs listed in reverse, as CUDA_VISIBLE_DEVICES=3,2,1,0 would
  auto node = bind_workers(t, NumaBinding::node, 4);
  CHECK(node[0] == std::vector<int>{12, 13, 14, 15});
  CHECK(node[3] == std::vector<int>{0, 1, 2, 3});
  auto socket = bind_workers(t, NumaBinding::socket, 4);
  CHECK(socket[0] == std::vector<int>{8, 9, 10, 11, 12, 13, 14, 15});
  CHECK(socket[3] == std::vector<int>{0, 1, 2, 3, 4, 5, 6, 7});
  CHECK(bind_workers(t, NumaBinding::none, 4) == std::vector<std::vector<int>>(4));

  Topology cpu_only = two_sockets();  // no GPUs: ranks dealt out in blocks, 2 per node for 8 workers
  CHECK(worker_domain(cpu_only, 0, 8) == 0);
  CHECK(worker_domain(cpu_only, 1, 8) == 0);
  CHECK(worker_domain(cpu_only, 2, 8) == 1);
  CHECK(worker_domain(cpu_only, 7, 8) == 3);
  auto excl = bind_workers(cpu_only, NumaBinding::exclusive, 8);
  CHECK(excl[0] == std::vector<int>{0, 1});
  CHECK(excl[1] == std::vector<int>{2, 3});
  CHECK(excl[7] == std::vector<int>{14, 15});
  auto ccx = bind_workers(cpu_only, NumaBinding::core_complex, 8);
  CHECK(ccx[2] == std::vector<int>{4, 5});
  CHECK(ccx[3] == std::vector<int>{6, 7});

  NumaDomain small;  // 3 CPUs for 2 workers: shares of 2 and 1
  small.cpus = {0, 1, 2};
  Topology one{{small}, {}};
  auto shares = bind_workers(one, NumaBinding::exclusive, 2);
  CHECK(shares[0] == std::vector<int>{0, 1});
  CHECK(shares[1] == std::vector<int>{2});
  CHECK_THROWS_WITH(bind_workers(one, NumaBinding::exclusive, 4),
                    doctest::Contains("--numa-binding: exclusive: 4 workers share NUMA node 0 of 3 CPU(s)"));
  CHECK(bind_workers(one, NumaBinding::core_complex, 2)[1] == std::vector<int>{0, 1, 2});  // no L3 known
  CHECK_THROWS_WITH(bind_workers(Topology{}, NumaBinding::node, 1), doctest::Contains("no NUMA node"));
  CHECK(parse_numa_binding("core_complex") == NumaBinding::core_complex);
  CHECK(parse({"--numa-binding=socket", "--standalone", "x"}).numa_binding == NumaBinding::socket);
}

TEST_CASE("GPUs in CUDA order: CUDA_VISIBLE_DEVICES indexes the buses, and stops at what it cannot use") {
  std::vector<std::string> buses = {"0000:07:00.0", "0000:46:00.0", "0000:85:00.0"};
  CHECK(visible_gpu_buses(buses, {}) == buses);
  CHECK(visible_gpu_buses(buses, {{"CUDA_VISIBLE_DEVICES", "2,0"}}) ==
        std::vector<std::string>{"0000:85:00.0", "0000:07:00.0"});
  CHECK(visible_gpu_buses(buses, {{"CUDA_VISIBLE_DEVICES", "1,GPU-abc,0"}}) == std::vector<std::string>{"0000:46:00.0"});
  CHECK(visible_gpu_buses(buses, {{"CUDA_VISIBLE_DEVICES", "7"}}).empty());
}

TEST_SUITE_END();

TEST_SUITE_BEGIN("agent env");

TEST_CASE("a failure record whose number is past an int's range is a type error, not undefined behaviour") {
  // nlohmann casts a float to int unchecked (found by fuzz/failure_record.cc); `exclude --from-failure` and the
  // store report a type error as they do for a string in that place.
  auto j = nlohmann::json::parse(R"({"host": "n1", "rank": -1.1e47})");
  CHECK_THROWS_AS(j.get<Failure>(), nlohmann::json::type_error);
  CHECK(nlohmann::json::parse(R"({"host": "n1", "rank": 3.0})").get<Failure>().rank == 3);
}

TEST_CASE("a failure blames a node only when the node is at fault: a lost agent or a worker dead of SIGBUS") {
  Failure lost;
  lost.host = "n2";
  lost.node_lost = true;
  lost.reason = "the agent on n2 (node 1) was lost";
  CHECK(faulty_node(lost) == "n2");
  Failure bus{"n3", 2, 9, 1, 0, SIGBUS, "", ""};
  CHECK(faulty_node(bus) == "n3");
  Failure code{"n3", 2, 9, 1, 1, 0, "", ""};
  CHECK(faulty_node(code).empty());  // the program's own failure
  Failure killed{"n3", 2, 9, 1, 0, SIGKILL, "", ""};
  CHECK(faulty_node(killed).empty());  // the OOM killer or a user: not the node's fault
  nlohmann::json j = lost;
  CHECK(j.get<Failure>().node_lost);
}

TEST_SUITE_END();

TEST_CASE("--grace/--shutdown-timeout, else TORCH_ELASTIC_SHUTDOWN_TIMEOUT, else 30 s before SIGKILL") {
  CHECK(parse({"--standalone", "--", "a"}).grace_s == 30);
  CHECK(parse({"--standalone", "--", "a"}, {{"TORCH_ELASTIC_SHUTDOWN_TIMEOUT", "7"}}).grace_s == 7);
  CHECK(parse({"--standalone", "--shutdown_timeout=3", "--", "a"}, {{"TORCH_ELASTIC_SHUTDOWN_TIMEOUT", "7"}}).grace_s == 3);
  CHECK(parse({"--standalone", "--grace", "0.5", "--", "a"}).grace_s == 0.5);
  CHECK(test::error_of_call([] { parse({"--standalone", "--shutdown-timeout", "soon", "--", "a"}); }) ==
        "--grace/--shutdown-timeout: 'soon' is not a number of seconds; e.g. 30");
  CHECK(test::error_of_call([] { parse({"--standalone", "--", "a"}, {{"TORCH_ELASTIC_SHUTDOWN_TIMEOUT", "-1"}}); }) ==
        "TORCH_ELASTIC_SHUTDOWN_TIMEOUT: '-1' is not a number of seconds; e.g. 30");
}

TEST_CASE("--duplicate-stdout-filters and --duplicate-stderr-filters are torchrun's comma lists") {
  auto o = parse({"--standalone", "--duplicate_stdout_filters=apple,,pie,orange", "--duplicate-stderr-filters",
                  "ERROR", "--", "a"});
  CHECK(o.dup_stdout_filters == std::vector<std::string>{"apple,pie", "orange"});
  CHECK(o.dup_stderr_filters == std::vector<std::string>{"ERROR"});
  CHECK(parse({"--standalone", "--", "a"}).dup_stdout_filters.empty());
}

TEST_CASE("a flag not given takes torchrun's PET_ variable; one on the command line wins") {
  struct Var {
    const char* name;
    Var(const char* n, const char* v) : name(n) { ::setenv(n, v, 1); }
    ~Var() { ::unsetenv(name); }
  };
  Var nproc("PET_NPROC_PER_NODE", "3"), standalone("PET_STANDALONE", "1"), restarts("PET_MAX_RESTARTS", "2");
  Var grace("PET_SHUTDOWN_TIMEOUT", "4"), filters("PET_DUPLICATE_STDOUT_FILTERS", "x,y");
  auto o = parse({"--", "a"});
  CHECK(o.nproc == 3);
  CHECK(o.standalone);
  CHECK(o.max_restarts == 2);
  CHECK(o.grace_s == 4);
  CHECK(o.dup_stdout_filters == std::vector<std::string>{"x", "y"});
  o = parse({"--nproc-per-node", "1", "--max_restarts=0", "--", "a"});
  CHECK(o.nproc == 1);
  CHECK(o.max_restarts == 0);
}
