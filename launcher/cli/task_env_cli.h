// The options `hpclaunch env` and `hpclaunch exec` share (--master-addr, --master-port, --gpu-bind), and the
// production effects they run with.
#pragma once
#include <CLI/CLI.hpp>

#include <string>

#include "cli/commands.h"
#include "runtime/task_env.h"

namespace hpclaunch {

struct TaskEnvCli {
  std::string master_addr;
  int master_port = 0;
  std::string gpu_bind;
};

void add_task_env_options(CLI::App& app, TaskEnvCli* cli);
TaskEnvOptions to_task_env_options(const CLI::App& app, const TaskEnvCli& cli);
TaskEnvEffects system_task_env_effects();
void print_notes(const TaskEnv& env);

}  // namespace hpclaunch
