// The subcommands of `hpclaunch`. Each lives in its own cli/cmd_NAME.cc and gets the arguments after its name.
#pragma once
#include <string>
#include <vector>

namespace hpclaunch {

using Args = std::vector<std::string>;

struct Command {
  const char* name;
  const char* summary;
  int (*run)(const Args& args);
  bool remote = false;  // takes --remote [USER@]HOST or SITE: runs on a login node over ssh (cli/remote_cli.cc)
};

const std::vector<Command>& commands();
// The table's entry for `name`, or nullptr.
const Command* find_command(const std::string& name);

int cmd_submit(const Args& args);
int cmd_render(const Args& args);
int cmd_sites(const Args& args);
int cmd_local_srun(const Args& args);
int cmd_env(const Args& args);
int cmd_exec(const Args& args);
int cmd_agent(const Args& args);
int cmd_torchrun(const Args& args);
int cmd_jobs(const Args& args);
int cmd_status(const Args& args);
int cmd_cancel(const Args& args);
int cmd_logs(const Args& args);
int cmd_wait(const Args& args);
int cmd_plot(const Args& args);
int cmd_report(const Args& args);
int cmd_check(const Args& args);
int cmd_exclude(const Args& args);
int cmd_completion(const Args& args);
int cmd_man(const Args& args);

}  // namespace hpclaunch
