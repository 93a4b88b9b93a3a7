// resolve_agent_options: the agent's decisions from its flags as written, the environment, the allocation and the
// machine (no command line parser here: cli/cmd_agent.cc reads the flags, agent_flags_test reads whole argvs).
#include <doctest/doctest.h>

#include <optional>
#include <set>

#include "agent/agent_options.h"
#include "test_util.h"

namespace agent_options_test {  // this file's names, apart from its unity batch's others (tests/CMakeLists.txt)

using namespace hpclaunch;

namespace {

const MachineInfo k_cpu_box{"box", 6, 0};
const MachineInfo k_gpu_box{"gbox", 64, 4};

AgentFlags with_command(std::vector<std::string> rest = {"train.py"}) {
  AgentFlags f;
  f.rest = std::move(rest);
  return f;
}

AgentOptions resolve(const AgentFlags& f, const MachineInfo& m = k_cpu_box, JobEnvironment job = {},
                     AgentFace face = AgentFace::agent) {
  return resolve_agent_options(f, {{"HPCLAUNCH_RDZV_SECRET", "s"}}, job, m, face);
}

std::string refusal(const AgentFlags& f, const MachineInfo& m = k_cpu_box, AgentFace face = AgentFace::agent) {
  return test::error_of_call([&] { resolve(f, m, {}, face); });
}

}  // namespace

TEST_SUITE_BEGIN("agent options");

TEST_CASE("--nproc-per-node: a number, gpu, xpu, cpu, or auto (the GPUs, else the XPUs, else the CPUs); default the job's GPUs") {
  auto nproc = [](const char* spec, const MachineInfo& m, std::optional<int> job_gpus = {}) {
    AgentFlags f = with_command();
    f.nproc = spec;
    f.set.standalone = true;
    JobEnvironment job;
    job.gpus = job_gpus;
    return resolve(f, m, job).nproc;
  };
  CHECK(nproc("3", k_cpu_box) == 3);
  CHECK(nproc("cpu", k_cpu_box) == 6);
  CHECK(nproc("auto", k_cpu_box) == 6);
  CHECK(nproc("auto", k_gpu_box) == 4);
  CHECK(nproc("gpu", k_gpu_box) == 4);
  CHECK(nproc("gpu", k_gpu_box, 2) == 2);  // the allocation's GPUs, not the machine's
  CHECK(nproc("", k_cpu_box) == 1);
  CHECK(nproc("", k_gpu_box, 2) == 2);
  const MachineInfo xpu_box{"xbox", 32, 0, 8};
  CHECK(nproc("xpu", xpu_box) == 8);
  CHECK(nproc("auto", xpu_box) == 8);
  AgentFlags f = with_command();
  f.nproc = "xpu";
  CHECK(refusal(f) == "--nproc-per-node: 'xpu' but no Intel GPU is visible; give a number instead");
  f.nproc = "gpu";
  CHECK(refusal(f) == "--nproc-per-node: 'gpu' but no GPU is visible; give a number instead");
  f.nproc = "0";
  CHECK(refusal(f) == "--nproc-per-node: '0' is not a whole number of at least 1");
}

TEST_CASE("--rdzv-conf keys set the join, last-call and heartbeat timeouts; unknown keys are refused") {
  AgentFlags f = with_command();
  f.set.standalone = true;
  f.rdzv_conf = "join_timeout=90, last_call_timeout=7,close_timeout=1,is_host=False";
  AgentOptions o = resolve(f);
  CHECK(o.join_timeout_s == 90);
  CHECK(o.last_call_s == 7);
  CHECK(o.heartbeat_timeout_s == 5);  // untouched without keep_alive keys
  f.rdzv_conf = "keep_alive_interval=2,keep_alive_max_attempt=4";
  CHECK(resolve(f).heartbeat_timeout_s == 8);
  f.rdzv_conf = "keep_alive_max_attempt=2";  // torchrun's interval default, 5 s
  CHECK(resolve(f).heartbeat_timeout_s == 10);
  f.rdzv_conf = "timeout=0";
  CHECK(refusal(f) == "--rdzv-conf: timeout=0 is not a positive number of seconds");
  f.rdzv_conf = "store_type=file";
  CHECK(refusal(f).rfind("--rdzv-conf: unknown key 'store_type'; known: timeout, ", 0) == 0);
}

TEST_CASE("static rendezvous: --master-addr and --master-port make the endpoint, --rdzv-endpoint wins") {
  AgentFlags f = with_command();
  f.rdzv_backend = "static";
  f.master_addr = "n1";
  f.master_port = "29500";
  f.nnodes = "2";
  f.node_rank = "1";
  AgentOptions o = resolve(f);
  CHECK(o.rdzv_host == "n1");
  CHECK(o.rdzv_port == 29500);
  CHECK(o.min_nodes == 2);
  CHECK(o.max_nodes == 2);
  CHECK(o.node_rank == 1);
  f.endpoint = "[fe80::1]:7";
  o = resolve(f);
  CHECK(o.rdzv_host == "fe80::1");
  CHECK(o.rdzv_port == 7);
  f.endpoint.clear();
  f.nnodes = "1:2";
  CHECK(refusal(f) == "--rdzv-backend: static takes a fixed number of nodes, but --nnodes is 1:2; use --nnodes N, "
                      "or --rdzv-backend c10d for MIN:MAX");
  f.nnodes = "2";
  f.master_addr.clear();
  CHECK(refusal(f) == "--master-port: given without --master-addr; give both, or --rdzv-endpoint HOST:PORT");
}

TEST_CASE("--standalone is one node on a free local port; a node rank must be below the node count") {
  AgentFlags f = with_command();
  f.set.standalone = true;
  JobEnvironment job;
  job.nnodes = 4;  // the allocation's size does not apply to a standalone agent
  AgentOptions o = resolve(f, k_cpu_box, job);
  CHECK(o.max_nodes == 1);
  CHECK(o.rdzv_host == "127.0.0.1");
  CHECK(o.rdzv_port == 0);
  f.endpoint = "h:1";
  CHECK(refusal(f) == "--standalone: chooses its own endpoint; drop --rdzv-endpoint");
  f = with_command();
  f.nnodes = "2";
  f.endpoint = "h:1";
  f.node_rank = "2";
  CHECK(refusal(f) == "--node-rank: 2 is not below --nnodes 2");
  // torchrun's own multi-node line, outside a scheduler: no node rank; the rendezvous numbers the nodes (c10d).
  f = with_command();
  f.nnodes = "2";
  f.endpoint = "h:29400";
  CHECK(resolve(f).node_rank == -1);
  f.rdzv_backend = "static";
  CHECK(refusal(f) == "--node-rank: not given, and this is not inside a Slurm or hpclaunch job; give --node-rank R (0 "
                      "on the node that serves the rendezvous), as the static rendezvous needs");
}

TEST_CASE("--spares: inside an allocation the nodes are its nodes less the spares; the spares' node ranks follow") {
  AgentFlags f = with_command();
  f.set.spares = 1;
  JobEnvironment job;
  job.nnodes = 3;
  job.node_rank = 2;
  job.master_addr = "n1";
  job.rendezvous_port = 29400;
  AgentOptions o = resolve(f, k_cpu_box, job);
  CHECK(o.min_nodes == 2);
  CHECK(o.max_nodes == 2);
  CHECK(o.node_rank == 2);  // a spare
  f.set.spares = 3;
  CHECK(test::error_of_call([&] { resolve(f, k_cpu_box, job); }) ==
        "--spares: 3 leaves none of the allocation's 3 nodes to run workers; use --spares 2 or fewer, or ask for "
        "more nodes");
  // Outside an allocation: --nnodes is the nodes that run, and node ranks go up to it plus the spares.
  f = with_command();
  f.set.spares = 1;
  f.nnodes = "2";
  f.endpoint = "h:1";
  f.node_rank = "2";
  CHECK(resolve(f).node_rank == 2);
  f.node_rank = "3";
  CHECK(refusal(f) == "--node-rank: 3 is not below --nnodes 2 + --spares 1");
  f.rdzv_backend = "static";
  f.node_rank = "0";
  CHECK(refusal(f) == "--spares: the static rendezvous has a fixed membership; a spare cannot join it; use "
                      "--rdzv-backend c10d (the default)");
  f = with_command();
  f.set.spares = 1;
  f.set.standalone = true;
  CHECK(refusal(f) == "--spares: a --standalone job has one node and no spares; drop --spares");
}

TEST_CASE("argv: as the agent, flags end at --; as torchrun, at the script, whose arguments keep their --") {
  AgentArgv a = split_agent_argv({"--nnodes", "2", "--", "train.py", "--", "x"}, AgentFace::agent);
  CHECK(a.flags == std::vector<std::string>{"--nnodes", "2"});
  CHECK(a.after_separator == std::vector<std::string>{"train.py", "--", "x"});
  a = split_agent_argv({"--nnodes", "2", "--", "train.py", "--", "x"}, AgentFace::torchrun);
  CHECK(a.flags.size() == 6);
  CHECK(a.after_separator.empty());

  AgentFlags f;
  f.rest = {"--", "train.py", "--", "x"};  // torchrun: a "--" right before the script is dropped, later ones kept
  CHECK(worker_command_of(f, AgentFace::torchrun) == std::vector<std::string>{"train.py", "--", "x"});
  f.rest = {"run.sh", "a"};
  f.after_separator = {"b"};
  CHECK(worker_command_of(f, AgentFace::agent) == std::vector<std::string>{"run.sh", "a", "b"});

  f = with_command({"main.py"});
  AgentOptions o = resolve(f, k_cpu_box, {}, AgentFace::torchrun);
  CHECK(o.command.always_python);
  CHECK_FALSE(resolve(f).command.always_python);
  CHECK(refusal(with_command({})) == "hpclaunch agent: no command to run; write `hpclaunch agent [FLAGS] -- CMD ARG...`");
  CHECK(refusal(with_command({"--"}), k_cpu_box, AgentFace::torchrun) ==
        "torchrun: no command to run; write `torchrun [FLAGS] SCRIPT ARG...`");
}

TEST_CASE("the torchrun face without a secret gets a shared word naming the run and endpoint; the agent refuses") {
  AgentFlags f = with_command();
  f.nnodes = "2";
  f.endpoint = "n1:29400";
  f.node_rank = "0";
  f.rdzv_id = "exp7";
  AgentOptions o = resolve_agent_options(f, {}, {}, k_cpu_box, AgentFace::torchrun);
  CHECK(o.secret == "torchrun-face:exp7@n1:29400");
  CHECK(test::error_of_call([&] { resolve_agent_options(f, {}, {}, k_cpu_box, AgentFace::agent); })
            .rfind("HPCLAUNCH_RDZV_SECRET: is not set", 0) == 0);
}

TEST_CASE("--redirects/--tee/--local-ranks-filter: each stream's file, console and duplicate as torchrun 2.x's") {
  // Expected values read off torch 2.6's DefaultLogsSpecs.reify and PContext (elastic/multiprocessing/api.py):
  // redirs |= tee; a redirected stream goes to its file; a tee'd one's file is tailed to the console and, with
  // duplicate filters, to filtered_*.log; neither: the console; outside the filter: no console, no tail.
  struct Row {
    const char* redirects;
    const char* tee;
    std::set<int> filter;
    int local_rank, stream;
    StreamRoute want;  // file, console, duplicate
  };
  const Row rows[] = {
      {"0", "0", {}, 0, 0, {false, true, false}},
      {"3", "0", {}, 0, 0, {true, false, false}},
      {"3", "0", {}, 0, 1, {true, false, false}},
      {"0", "3", {}, 0, 0, {true, true, true}},
      {"3", "3", {}, 0, 0, {true, true, true}},  // tee wins: this once wrote the files and printed nothing
      {"3", "3", {}, 1, 1, {true, true, true}},
      {"1", "2", {}, 0, 0, {true, false, false}},
      {"1", "2", {}, 0, 1, {true, true, true}},
      {"2", "1", {}, 0, 1, {true, false, false}},
      {"1", "1", {}, 0, 0, {true, true, true}},
      {"1", "1", {}, 0, 1, {false, true, false}},
      {"0:3,1:1", "0", {}, 1, 0, {true, false, false}},
      {"0:3,1:1", "0", {}, 1, 1, {false, true, false}},
      {"0:3,1:1", "0", {}, 2, 0, {false, true, false}},  // a rank the map leaves out: Std.NONE
      {"3", "1:3", {}, 1, 0, {true, true, true}},
      {"3", "1:3", {}, 0, 0, {true, false, false}},
      {"0", "0", {0}, 0, 0, {false, true, false}},
      {"0", "0", {0}, 1, 0, {false, false, false}},  // not redirected, filtered out: devnull
      {"3", "3", {0}, 1, 0, {true, false, false}},   // tee'd, filtered out: the file only
      {"3", "3", {0}, 0, 1, {true, true, true}},
      {"3", "0", {1}, 1, 0, {true, false, false}},
      {"0", "2", {1}, 0, 1, {true, false, false}},
  };
  for (const auto& r : rows) {
    AgentOptions o;
    o.redirects = r.redirects;
    o.tee = r.tee;
    o.local_ranks_filter = r.filter;
    auto got = stream_route(o, r.local_rank, r.stream);
    INFO("--redirects ", r.redirects, " --tee ", r.tee, " filter size ", r.filter.size(), " local rank ", r.local_rank,
         " stream ", r.stream);
    CHECK(got.file == r.want.file);
    CHECK(got.console == r.want.console);
    CHECK(got.duplicate == r.want.duplicate);
  }
}

TEST_SUITE_END();

}  // namespace agent_options_test
