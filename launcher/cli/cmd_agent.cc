// `hpclaunch agent`: one per node, torchrun's job (docs/agent.md). Reads the flags, the environment and the
// machine, then hands over to ElasticAgent.
#include <fmt/core.h>
#include <sched.h>
#include <unistd.h>

#include <filesystem>
#include <regex>

#include "agent/agent_options.h"
#include "agent/elastic_agent.h"
#include "agent/job_environment.h"
#include "agent/numa_topology.h"
#include "cli/commands.h"
#include "cli/help_text.h"

namespace hpclaunch {

namespace {

MachineInfo this_machine() {
  MachineInfo m;
  char host[256] = {};
  ::gethostname(host, sizeof host - 1);
  m.hostname = host;
  cpu_set_t set;
  m.cpus = ::sched_getaffinity(0, sizeof set, &set) == 0 ? CPU_COUNT(&set) : 1;
  std::error_code ec;
  static const std::regex gpu_dev("nvidia[0-9]+");
  for (const auto& e : std::filesystem::directory_iterator("/dev", ec))
    if (std::regex_match(e.path().filename().string(), gpu_dev)) ++m.gpus;
  return m;
}

int run_agent(const Args& args, AgentFace face) {
  EnvMap env = capture_environment();
  MachineInfo machine = this_machine();
  JobEnvironment job = read_job_environment(env, runtime_rules());
  AgentOptions options;
  std::string help;
  if (!parse_agent_options(args, env, job, machine, &options, &help, face)) {
    print_help(help);
    return 0;
  }
  if (options.numa_binding != NumaBinding::none)
    options.worker_cpus = bind_workers(read_topology(env), options.numa_binding, options.nproc);
  ElasticAgent agent(std::move(options), std::move(env), machine.cpus);
  return agent.run();
}

}  // namespace

int cmd_agent(const Args& args) { return run_agent(args, AgentFace::agent); }

// The torchrun face: `hpclaunch torchrun ...`, or this binary invoked as `torchrun` (cli/main.cc).
int cmd_torchrun(const Args& args) { return run_agent(args, AgentFace::torchrun); }

}  // namespace hpclaunch
