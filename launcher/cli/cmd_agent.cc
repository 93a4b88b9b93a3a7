// `hpclaunch agent`: one per node, torchrun's job (docs/agent.md). Reads the flags (CLI11 here; what they decide:
// resolve_agent_options in agent/agent_options.cc), the environment and the machine, then hands over to
// ElasticAgent.
#include "cli/cmd_agent.h"

#include <CLI/CLI.hpp>
#include <fmt/core.h>
#include <sched.h>
#include <unistd.h>

#include <cctype>
#include <cstdlib>
#include <filesystem>
#include <regex>

#include "agent/elastic_agent.h"
#include "agent/job_environment.h"
#include "agent/numa_topology.h"
#include "agent/protocol.h"
#include "cli/help_text.h"
#include "runtime/node_devices.h"
#include "runtime/nvlink_fabric.h"
#include "util/cli_error.h"
#include "util/strings.h"

namespace hpclaunch {

namespace {

MachineInfo this_machine(const Env& env) {
  MachineInfo m;
  m.hostname = host_name();
  cpu_set_t set;
  m.cpus = ::sched_getaffinity(0, sizeof set, &set) == 0 ? CPU_COUNT(&set) : 1;
  // The devices each vendor's runtime would number, as the variables select them (runtime/node_devices.h).
  TorchDeviceCounts counts = torch_device_counts(machine_sysfs(), env);
  m.gpus = counts.cuda;
  m.xpus = counts.xpu;
  if (m.gpus == 0 && node_devices(Accelerator::nvidia, machine_sysfs()).empty()) {
    // NVIDIA's device files, where its /proc folder is not there (some containers)
    std::error_code ec;
    static const std::regex gpu_dev("nvidia[0-9]+");
    for (const auto& e : std::filesystem::directory_iterator("/dev", ec))
      if (std::regex_match(e.path().filename().string(), gpu_dev)) ++m.gpus;
  }
  return m;
}

// torchrun's variable for a flag: PET_ and its name in capitals with _ for - ("nproc-per-node" -> PET_NPROC_PER_NODE).
std::string pet_variable(std::string name) {
  for (char& ch : name) ch = ch == '-' ? '_' : static_cast<char>(std::toupper(static_cast<unsigned char>(ch)));
  return "PET_" + name;
}

// torchrun's --print-completion (its shtab's job): the long flags, for `complete` in bash (zsh through
// bashcompinit) or tcsh; a file name is completed after them.
std::string completion_script(const CLI::App& app, const std::string& command, const std::string& shell) {
  std::vector<std::string> flags;
  for (const CLI::Option* opt : app.get_options())
    for (const auto& n : opt->get_lnames()) flags.push_back("--" + n);
  std::string words = join(flags, " ");
  if (shell == "tcsh") {
    for (auto& f : flags) f = f.substr(2);
    return fmt::format("complete {} 'c/--/({})/' 'p/*/f/'\n", command, join(flags, " "));
  }
  std::string s = shell == "zsh" ? "autoload -U +X bashcompinit && bashcompinit\n" : "";
  return s + fmt::format("complete -o default -W '{}' {}\n", words, command);
}

int run_agent(const Args& args, AgentFace face) {
  EnvMap env = capture_environment();
  MachineInfo machine = this_machine(env);
  JobEnvironment job = read_job_environment(env, runtime_rules());
  AgentFlags flags;
  std::string help;
  if (!parse_agent_flags(args, face, &flags, &help)) {
    print_help(help);
    return 0;
  }
  // As torchrun: a --standalone run without --rdzv-id gets a new id each time (its uuid4), not "none".
  if (flags.set.standalone && flags.rdzv_id.empty()) {
    const std::string h = random_secret() + random_secret();  // 64 random hex digits
    flags.rdzv_id = fmt::format("{}-{}-4{}-{:x}{}-{}", h.substr(0, 8), h.substr(8, 4), h.substr(12, 3),
                                8 + (std::stoi(h.substr(15, 1), nullptr, 16) & 3), h.substr(16, 3), h.substr(19, 12));
  }
  AgentOptions options = resolve_agent_options(flags, env, job, machine, face);
  // A multi-node job on NVIDIA GPUs: the node's NVLink domain, unless HPCLAUNCH_NVLINK_DOMAIN said it (a test, a
  // site's prolog). Without nvidia-smi, or without a multi-node fabric, none.
  if (options.nvlink_domain.empty() && !env.count("HPCLAUNCH_NVLINK_DOMAIN") && options.max_nodes + options.spares > 1)
    if (auto fabric = machine_nvlink_fabric()) options.nvlink_domain = fabric->domain;
  if (options.numa_binding != NumaBinding::none)
    options.worker_cpus = bind_workers(read_topology(env), options.numa_binding, options.nproc);
  for (auto& [name, value] : neutral_job_vars(env, job.node_rank)) env[name] = std::move(value);  // the workers'
  ElasticAgent agent(std::move(options), std::move(env), machine.cpus);
  return agent.run();
}

}  // namespace

bool parse_agent_flags(const Args& args, AgentFace face, AgentFlags* out, std::string* help) {
  AgentArgv argv = split_agent_argv(args, face);
  AgentFlags f;
  AgentOptions& o = f.set;
  f.after_separator = argv.after_separator;
  bool run_path = false;
  std::string ignored;  // torchrun flags that change nothing here (see docs/agent.md)
  const std::string name = face == AgentFace::torchrun ? "torchrun" : "hpclaunch agent";
  CLI::App app(face == AgentFace::torchrun
                   ? "hpclaunch's elastic agent with torchrun's command line: SCRIPT and its arguments follow the flags."
                   : "Start one worker per GPU on this node and keep the job alive through failures (torchrun's job).",
               name);
  app.prefix_command();
  app.option_defaults()->multi_option_policy(CLI::MultiOptionPolicy::TakeLast);  // as argparse: the last one wins
  app.add_option("--nnodes", f.nnodes, "N or MIN:MAX nodes (default: the allocation's, else 1)");
  app.add_option("--nproc-per-node,--nproc_per_node", f.nproc, "workers on this node: N, gpu, xpu, cpu or auto");
  app.add_option("--rdzv-endpoint,--rdzv_endpoint", f.endpoint, "HOST:PORT of the node-0 agent's store");
  app.add_option("--rdzv-id,--rdzv_id", f.rdzv_id, "the job's id (TORCHELASTIC_RUN_ID; default: the job id)");
  app.add_option("--max-restarts,--max_restarts", o.max_restarts, "restarts of the whole job after a failure")
      ->check(CLI::NonNegativeNumber);
  app.add_option("--role", o.role, "ROLE_NAME of the workers");
  app.add_option("--log-dir,--log_dir", o.log_dir, "per-rank log files under DIR/attempt_N/rank_R/");
  app.add_option("-r,--redirects", o.redirects, "streams to log files only: 0-3 or LOCAL_RANK:0-3,...");
  app.add_option("-t,--tee", o.tee, "streams to log files and the console: 0-3 or LOCAL_RANK:0-3,...");
  app.add_option("--local-ranks-filter,--local_ranks_filter", f.local_ranks_filter,
                 "console output only from these local ranks");
  app.add_flag("--standalone", o.standalone, "one node, a store on a free local port");
  app.add_option("--node-rank,--node_rank", f.node_rank, "this node's rank (default: the allocation's)");
  app.add_option("--grace,--shutdown-timeout,--shutdown_timeout", f.shutdown_timeout,
                 "seconds between SIGTERM and SIGKILL when stopping workers (default: TORCH_ELASTIC_SHUTDOWN_TIMEOUT, else 30)");
  app.add_option("--rdzv-timeout", o.join_timeout_s, "seconds to wait for the nodes to join")
      ->check(CLI::PositiveNumber);
  app.add_option("--rdzv-last-call", o.last_call_s, "seconds to wait for more nodes once MIN joined")
      ->check(CLI::NonNegativeNumber);
  app.add_option("--heartbeat-timeout", o.heartbeat_timeout_s, "seconds of silence before a peer is lost")
      ->check(CLI::PositiveNumber);
  app.add_flag("--no-python,--no_python", o.command.no_python, "run the command as is, not with python");
  app.add_flag("-m,--module", o.command.module, "the command is a python module (python -m)");
  app.add_option("--rdzv-backend,--rdzv_backend", f.rdzv_backend, "c10d (the agent's own store; the only one)");
  app.add_option("--rdzv-conf,--rdzv_conf", f.rdzv_conf, "K=V,... torchrun's rendezvous settings (docs/agent.md)");
  // Workers are exec'd processes watched by SIGCHLD: no polling interval, no start method.
  app.add_option("--monitor-interval,--monitor_interval", ignored, "accepted for torchrun; no effect")
      ->check(CLI::NonNegativeNumber);
  app.add_option("--start-method,--start_method", ignored, "accepted for torchrun; no effect")
      ->check(CLI::IsMember({"spawn", "fork", "forkserver"}));
  app.add_option("--event-log-handler,--event_log_handler", f.event_log_handler,
                 "torchrun's Python events handler: only null (its default) applies here");
  app.add_option("--log-line-prefix-template,--log_line_prefix_template", o.log_line_prefix_template,
                 "console line prefix with ${role_name} ${local_rank} ${rank} ${hostname}; '' for bare lines "
                 "(default: TORCHELASTIC_LOG_LINE_PREFIX_TEMPLATE, else [HOST:RANK] )")
      ->expected(0, 1);  // `--log-line-prefix-template=` and an empty PET_ variable: the empty template
  std::string completion;
  app.add_option("--print-completion,--print_completion", completion, "print a shell completion script and exit")
      ->check(CLI::IsMember({"bash", "zsh", "tcsh"}));
  app.add_option("--master-addr,--master_addr", f.master_addr,
                 "the node-rank-0 host, when --rdzv-endpoint is not given (torchrun's static rendezvous)");
  app.add_option("--master-port,--master_port", f.master_port, "its port, when --rdzv-endpoint is not given");
  app.add_option("--local-addr,--local_addr", o.local_addr,
                 "this node's address: on node rank 0, the MASTER_ADDR the workers get");
  app.add_option("--signals-to-handle,--signals_to_handle", f.signals,
                 "signals passed on to the workers, e.g. SIGTERM,SIGINT,SIGHUP,SIGQUIT (default: those and SIGUSR1/2)");
  app.add_flag("--virtual-local-rank,--virtual_local_rank", o.virtual_local_rank,
               "every worker sees LOCAL_RANK=0 and only its own GPU (in its vendor's variables: "
               "CUDA_VISIBLE_DEVICES, ROCR_VISIBLE_DEVICES or ZE_AFFINITY_MASK)");
  app.add_flag("--run-path,--run_path", run_path, "accepted for torchrun; the script runs in a worker process either way");
  app.add_option("--logs-specs,--logs_specs", f.logs_specs, "torchrun's logs-specs plugin: only the default is known here");
  app.add_option("--numa-binding,--numa_binding", f.numa_binding,
                 "bind each worker to the CPUs near its GPU: node, socket, exclusive or core-complex");
  app.add_option("--duplicate-stdout-filters,--duplicate_stdout_filters", f.dup_stdout_filters,
                 "a,b,...: tee'd stdout lines holding any also go to ATTEMPT_DIR/filtered_stdout.log (,, is a comma)");
  app.add_option("--duplicate-stderr-filters,--duplicate_stderr_filters", f.dup_stderr_filters,
                 "the same for stderr, to filtered_stderr.log");
  app.add_flag("-v,--verbose", o.verbose, "log the rendezvous");
  app.add_option("--hang-timeout", o.hang_timeout_s,
                 "seconds without progress after which a worker is hung: its stacks are recorded and the job "
                 "restarts (default: HPCLAUNCH_HANG_TIMEOUT, else 0, not watched)")
      ->check(CLI::NonNegativeNumber)
      ->envname("HPCLAUNCH_HANG_TIMEOUT");
  app.add_option("--hang-startup-timeout", o.hang_startup_s,
                 "seconds a worker may take to its first progress in an attempt (imports, loading a checkpoint) "
                 "(default: HPCLAUNCH_HANG_STARTUP_TIMEOUT, else --hang-timeout, at least 300)")
      ->check(CLI::NonNegativeNumber)
      ->envname("HPCLAUNCH_HANG_STARTUP_TIMEOUT");
  app.add_flag("--hang-output{true},--no-hang-output{false}", o.hang_output,
               "a program that reports no progress is hung when no worker prints a line for --hang-timeout "
               "(default: HPCLAUNCH_HANG_OUTPUT)")
      ->envname("HPCLAUNCH_HANG_OUTPUT");
  app.add_option("--no-progress-limit", o.no_progress_limit,
                 "attempts in a row without progress after which the job stops with exit 93, not requeued "
                 "(0: never; default: HPCLAUNCH_NO_PROGRESS_LIMIT, else 3)")
      ->check(CLI::NonNegativeNumber)
      ->envname("HPCLAUNCH_NO_PROGRESS_LIMIT");
  app.add_option("--spares", o.spares,
                 "nodes beyond --nnodes that wait in the rendezvous, holding no workers, and take the place of a "
                 "node that is lost or hangs (default: HPCLAUNCH_SPARES, else 0; inside an allocation --nnodes is "
                 "then its nodes less these)")
      ->check(CLI::NonNegativeNumber)
      ->envname("HPCLAUNCH_SPARES");
  // As torchrun's argparse `env` actions: a flag not given takes PET_<NAME> from the environment.
  for (const char* name : {"nnodes", "nproc-per-node", "rdzv-backend", "rdzv-endpoint", "rdzv-id", "rdzv-conf",
                           "standalone", "max-restarts", "monitor-interval", "start-method", "event-log-handler",
                           "role", "module", "no-python", "run-path", "log-dir", "redirects", "tee",
                           "log-line-prefix-template",
                           "local-ranks-filter", "duplicate-stdout-filters", "duplicate-stderr-filters", "node-rank",
                           "master-addr", "master-port", "local-addr", "signals-to-handle", "shutdown-timeout",
                           "virtual-local-rank"})
    app.get_option(std::string("--") + name)->envname(pet_variable(name));
  if (parse_cli(app, argv.flags, name) != Parsed::flags) {
    *help = app.help() + "\nEverything after -- (or the first word that is no flag) is the worker's command.\n";
    return false;
  }
  if (!completion.empty()) {
    *help = completion_script(app, name == "torchrun" ? "torchrun" : "hpclaunch", completion);
    return false;
  }
  f.rest = app.remaining();
  f.set.log_line_prefix_given = app.get_option("--log-line-prefix-template")->count() > 0;
  if (const char* pet = std::getenv("PET_LOG_LINE_PREFIX_TEMPLATE"); pet && !f.set.log_line_prefix_given) {
    f.set.log_line_prefix_template = pet;  // CLI11 skips an empty variable; torchrun's argparse takes it
    f.set.log_line_prefix_given = true;
  }
  // The parser stops at the first word that is no flag of its own: an unknown flag before the command.
  std::vector<std::string> command = worker_command_of(f, face);
  if (!f.rest.empty() && !command.empty() && looks_like_flag(command.front()))
    throw unknown_option(command.front(), app, name);
  *out = std::move(f);
  return true;
}

int cmd_agent(const Args& args) { return run_agent(args, AgentFace::agent); }

// The torchrun face: `hpclaunch torchrun ...`, or this binary invoked as `torchrun` (cli/main.cc).
int cmd_torchrun(const Args& args) { return run_agent(args, AgentFace::torchrun); }

}  // namespace hpclaunch
