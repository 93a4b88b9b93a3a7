#include "cli/commands.h"

namespace hpclaunch {

const std::vector<Command>& commands() {
  static const std::vector<Command> table = {
      {"submit", "render a batch script for a site and submit it (runs it here on --site local)", cmd_submit},
      {"render", "print the batch script that submit would write (same as submit --dry-run)", cmd_render},
      {"sites", "list the site profiles, or `sites show NAME` for one resolved profile", cmd_sites},
      {"local-srun", "start tasks as emulated nodes on this machine (srun's part on --site local)", cmd_local_srun},
      {"env", "print this task's RANK, WORLD_SIZE, MASTER_ADDR, ... (sh to eval, or --format json)", cmd_env},
      {"exec", "set this task's RANK, WORLD_SIZE, MASTER_ADDR, ... and exec the command after --", cmd_exec},
      {"agent", "per-node elastic agent: start this node's workers and keep the job alive (torchrun's job)",
       cmd_agent},
  };
  return table;
}

}  // namespace hpclaunch
