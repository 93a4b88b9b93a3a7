// `hpclaunch exec [--master-addr A] [--master-port P] [--gpu-bind none|local-rank] -- CMD [ARG...]`: sets
// this task's torch variables and becomes CMD (execvp: same pid, so exit status and signals are CMD's own).
#include <fmt/core.h>
#include <unistd.h>

#include <cerrno>
#include <cstdlib>
#include <cstring>
#include <vector>

#include "cli/cli_util.h"
#include "cli/commands.h"
#include "cli/task_env_cli.h"
#include "util/error.h"

namespace hpclaunch {

int cmd_exec(const Args& args) {
  SplitArgs split = split_at_separator(args);
  CLI::App app("Set this task's torch rendezvous variables and replace hpclaunch with CMD (same pid).", "exec");
  app.footer("The command goes after `--`: hpclaunch exec [OPTIONS] -- CMD [ARG...]");
  TaskEnvCli cli;
  add_task_env_options(app, &cli);
  if (!parse_or_throw(app, split.options)) return 0;
  std::vector<std::string> command = split.command;
  if (command.empty())
    throw Error("exec", "no command to run", "put it after `--`: hpclaunch exec -- python train.py");

  TaskEnv task = compute_task_env(capture_environment(), to_task_env_options(app, cli), system_task_env_effects());
  print_notes(task);
  for (const auto& [name, value] : task.vars) {
    if (setenv(name.c_str(), value.c_str(), 1) != 0)
      throw failure(name, std::string("cannot set: ") + std::strerror(errno));
  }
  std::vector<char*> argv;
  for (auto& a : command) argv.push_back(a.data());
  argv.push_back(nullptr);
  std::fflush(stdout);
  std::fflush(stderr);
  execvp(argv[0], argv.data());
  int err = errno;
  throw Error(command[0], std::string("cannot run: ") + std::strerror(err),
              "check the name and PATH (hpclaunch exec runs it without a shell)", err == ENOENT ? 127 : 126);
}

}  // namespace hpclaunch
