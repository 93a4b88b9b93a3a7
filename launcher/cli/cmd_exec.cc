// `hpclaunch exec [--master-addr A] [--master-port P] [--gpu-bind none|local-rank] -- CMD [ARG...]`: sets
// this task's torch variables and becomes CMD (execvp: same pid, so exit status and signals are CMD's own).
#include <fmt/core.h>
#include <unistd.h>

#include <algorithm>
#include <cerrno>
#include <cstdlib>
#include <cstring>
#include <vector>

#include "cli/commands.h"
#include "cli/task_env_cli.h"
#include "util/error.h"

namespace hpclaunch {

int cmd_exec(const Args& args) {
  auto dash = std::find(args.begin(), args.end(), "--");
  Args options(args.begin(), dash);
  std::vector<std::string> command(dash == args.end() ? dash : dash + 1, args.end());
  CLI::App app("Set this task's torch rendezvous variables and replace hpclaunch with CMD (same pid).",
               "hpclaunch exec");
  app.footer("The command goes after `--`: hpclaunch exec [OPTIONS] -- CMD [ARG...]");
  TaskEnvCli cli;
  add_task_env_options(app, &cli);
  if (dash == args.end()) app.allow_extras();  // `hpclaunch exec python x.py`: say where the command goes
  if (!parse_cli(app, options, "exec")) return 0;
  if (!app.remaining().empty())
    throw Error("hpclaunch exec", "'" + app.remaining().front() + "' is not an option and there is no `--`",
                "put the command after `--`: hpclaunch exec [OPTIONS] -- CMD [ARG...]");
  if (command.empty())
    throw Error("hpclaunch exec", "no command to run", "put it after `--`: hpclaunch exec -- python train.py");

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
