// `hpclaunch agent`'s and the torchrun face's whole command lines: cli/cmd_agent.cc reads the flags (torchrun's
// spellings, PET_ variables), agent/agent_options.cc decides (agent_options_test checks that part without a parser).
#include <doctest/doctest.h>

#include <csignal>

#include <nlohmann/json.hpp>

#include "agent/agent_options.h"
#include "agent/job_environment.h"
#include "agent/numa_binding.h"
#include "agent/worker_env.h"
#include "cli/cmd_agent.h"
#include "util/error.h"
#include "test_util.h"

namespace agent_flags_test {  // this file's names, apart from its unity batch's others (tests/CMakeLists.txt)

using namespace hpclaunch;

TEST_SUITE_BEGIN("agent flags");

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

TEST_CASE("--log-line-prefix-template: torchrun's macros as string.Template.safe_substitute; else its variable") {
  auto o = parse({"--log-line-prefix-template", "${hostname}:$rank ${local_rank}/${role_name}$$ $x ${rank ${} ",
                  "--role", "r", "--standalone", "t.py"});
  o.host = "n7";
  CHECK(line_prefix(o, 1, 5) == "n7:5 1/r$ $x ${rank ${} ");
  o = parse({"--standalone", "t.py"}, {{"TORCHELASTIC_LOG_LINE_PREFIX_TEMPLATE", "<${rank}>"}});
  CHECK(line_prefix(o, 0, 3) == "<3>");
  o = parse({"--log_line_prefix_template=[${rank}]", "--standalone", "t.py"},
            {{"TORCHELASTIC_LOG_LINE_PREFIX_TEMPLATE", "<${rank}>"}});
  CHECK(line_prefix(o, 0, 3) == "[3]");  // the command line wins, as torchrun's
  o = parse({"--standalone", "t.py"});
  o.host = "n7";
  CHECK(line_prefix(o, 0, 3) == "[n7:3] ");
  // Given empty, on the command line or in torchrun's variable: bare lines, as torchrun's console.
  CHECK(line_prefix(parse({"--log-line-prefix-template", "", "--standalone", "t.py"}), 0, 3).empty());
  CHECK(line_prefix(parse({"--log_line_prefix_template=", "--standalone", "t.py"}), 0, 3).empty());
  CHECK(line_prefix(parse({"--standalone", "t.py"}, {{"TORCHELASTIC_LOG_LINE_PREFIX_TEMPLATE", ""}}), 0, 3).empty());
}

TEST_CASE("a flag given twice: the last one wins, as argparse's") {
  CHECK(parse({"--nproc-per-node", "1", "--standalone", "--nproc-per-node", "3", "t.py"}).nproc == 3);
}

TEST_CASE("--event-log-handler other than null and --logs-specs other than the default are refused: Python plugins") {
  CHECK_THROWS_WITH(parse({"--event-log-handler", "console", "--standalone", "t.py"}),
                    doctest::Contains("--event-log-handler: 'console' names a handler in torch's Python events registry"));
  CHECK_THROWS_WITH(parse({"--logs-specs", "mine", "--standalone", "t.py"}),
                    doctest::Contains("--logs-specs: 'mine' is a Python plugin"));
}

TEST_CASE("--print-completion prints a completion script with every long flag instead of running") {
  AgentFlags flags;
  std::string script;
  CHECK_FALSE(parse_agent_flags({"--print-completion", "bash"}, AgentFace::torchrun, &flags, &script));
  CHECK(script.find("complete -o default -W '--help --nnodes") == 0);
  CHECK(script.find("--log-line-prefix-template") != std::string::npos);
  CHECK(script.find(" torchrun\n") != std::string::npos);
  CHECK_FALSE(parse_agent_flags({"--print-completion", "tcsh"}, AgentFace::torchrun, &flags, &script));
  CHECK(script.find("complete torchrun 'c/--/(help nnodes") == 0);
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
  fails({"--nnodes", "2", "--rdzv-backend", "static", "--rdzv-endpoint", "h:1", "--", "x"}, "--node-rank: not given");
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

TEST_SUITE_BEGIN("agent flags");

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

TEST_CASE("--numa-binding=socket is read as the socket binding") {
  CHECK(parse({"--numa-binding=socket", "--standalone", "x"}).numa_binding == NumaBinding::socket);
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

}  // namespace agent_flags_test
