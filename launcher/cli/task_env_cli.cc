#include "cli/task_env_cli.h"

#include <fmt/core.h>

#include "runtime/system.h"

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

TaskEnvEffects system_task_env_effects() { return {read_text_file, resolve_ipv4, command_output}; }

void print_notes(const TaskEnv& env) {
  for (const auto& note : env.notes) fmt::print(stderr, "hpclaunch: note: {}\n", note);
}

}  // namespace hpclaunch
