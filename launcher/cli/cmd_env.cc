// `hpclaunch env [--format sh|json]`: prints this task's RANK, LOCAL_RANK, WORLD_SIZE, ... MASTER_ADDR,
// MASTER_PORT, as `export` lines to eval or as one JSON object. Notes (world of one, ...) go to stderr.
#include <fmt/core.h>

#include <algorithm>
#include <nlohmann/json.hpp>

#include "cli/cli_util.h"
#include "cli/commands.h"
#include "cli/task_env_cli.h"
#include "runtime/system.h"
#include "util/error.h"
#include "util/shell.h"

namespace hpclaunch {

void add_task_env_options(CLI::App& app, TaskEnvCli* cli) {
  app.add_option("--master-addr", cli->master_addr, "MASTER_ADDR (an existing MASTER_ADDR still wins)");
  app.add_option("--master-port", cli->master_port, "MASTER_PORT (an existing MASTER_PORT still wins)");
  app.add_option("--gpu-bind", cli->gpu_bind,
                 "none: leave CUDA_VISIBLE_DEVICES; local-rank: this task's entry of the node's GPU list "
                 "(default: HPCLAUNCH_GPU_BIND, else none)");
}

TaskEnvOptions to_task_env_options(const CLI::App& app, const TaskEnvCli& cli) {
  TaskEnvOptions o;
  if (app.count("--master-addr")) o.master_addr = cli.master_addr;
  if (app.count("--master-port")) o.master_port = cli.master_port;
  if (app.count("--gpu-bind")) o.gpu_bind = parse_gpu_bind(cli.gpu_bind, "--gpu-bind");
  return o;
}

TaskEnvEffects system_task_env_effects() { return {read_text_file, resolve_ipv4}; }

void print_notes(const TaskEnv& env) {
  for (const auto& note : env.notes) fmt::print(stderr, "hpclaunch: note: {}\n", note);
}

int cmd_env(const Args& args) {
  CLI::App app("Print this task's torch rendezvous variables (RANK, WORLD_SIZE, MASTER_ADDR, ...).", "env");
  std::string format = "sh";
  app.add_option("--format", format, "sh: export lines for eval (default); json: one object")
      ->check(CLI::IsMember({"sh", "json"}));
  TaskEnvCli cli;
  add_task_env_options(app, &cli);
  if (!parse_or_throw(app, args)) return 0;
  TaskEnv task = compute_task_env(capture_environment(), to_task_env_options(app, cli), system_task_env_effects());
  print_notes(task);
  if (format == "json") {
    nlohmann::ordered_json j;
    for (const auto& [name, value] : task.vars) j[name] = value;
    fmt::print("{}\n", j.dump());
  } else {
    for (const auto& [name, value] : task.vars) fmt::print("export {}={}\n", name, shell_quote(value));
  }
  return 0;
}

}  // namespace hpclaunch
