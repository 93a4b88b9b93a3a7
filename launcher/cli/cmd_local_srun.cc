// `hpclaunch local-srun`: srun's part on the `local` site; starts one task per emulated node slot.
#include <cstdlib>

#include "cli/cli_util.h"
#include "schedulers/local/backend_job.h"
#include "util/error.h"

namespace hpclaunch {

int cmd_local_srun(const Args& args) {
  CLI::App app("Start NODES x NTASKS_PER_NODE tasks on this machine as emulated nodes (the local site's srun).",
               "local-srun");
  int nodes = 1, tasks_per_node = 1, gpus_per_node = 0;
  app.add_option("--nodes", nodes, "emulated nodes")->check(CLI::Range(1, 1024));
  app.add_option("--ntasks-per-node", tasks_per_node, "tasks per node")->check(CLI::Range(1, 1024));
  app.add_option("--gpus-per-node", gpus_per_node, "worker slots per node")->check(CLI::Range(0, 1024));
  bool no_kill = false;
  app.add_flag("--no-kill,-k", no_kill, "as srun's: a task that fails does not end the others (agents with spares)");
  SplitArgs split = split_at_separator(args);
  if (!parse_or_throw(app, split.options)) return 0;
  if (split.command.empty()) throw Error("--", "no command after `--`", "end the options with `-- CMD [ARG...]`");
  const char* id = std::getenv("HPCLAUNCH_JOB_ID");
  std::string job_id = id && *id ? id : new_local_job_id();
  return run_local_tasks(split.command, job_id, nodes, tasks_per_node, gpus_per_node, !no_kill);
}

}  // namespace hpclaunch
