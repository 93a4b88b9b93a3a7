#include "cli/commands.h"

namespace hpclaunch {

const std::vector<Command>& commands() {
  static const std::vector<Command> table = {
      {"submit", "render a batch script for a site and submit it (runs it here on --site local)", cmd_submit, true},
      {"render", "print the batch script that submit would write (same as submit --dry-run)", cmd_render, true},
      {"sites", "list the site profiles, or `sites show NAME` for one resolved profile", cmd_sites},
      {"local-srun", "start tasks as emulated nodes on this machine (srun's part on --site local)", cmd_local_srun},
      {"env", "print this task's RANK, WORLD_SIZE, MASTER_ADDR, ... (sh to eval, or --format json)", cmd_env},
      {"exec", "set this task's RANK, WORLD_SIZE, MASTER_ADDR, ... and exec the command after --", cmd_exec},
      {"agent", "per-node elastic agent: start this node's workers and keep the job alive (torchrun's job)",
       cmd_agent},
      {"torchrun", "the agent with torchrun's command line (also: this binary run as `torchrun`, docs/agent.md)",
       cmd_torchrun},
      {"jobs", "list the jobs submitted from this machine: id, site, nodes, state, when, job directory", cmd_jobs, true},
      {"status", "print a job's state as its scheduler tells it (squeue/scontrol, qstat, local runner)", cmd_status, true},
      {"cancel", "cancel a job (scancel, qdel, or stop a local job)", cmd_cancel, true},
      {"logs", "print a job's output; --follow until it ends, --rank R for one rank's lines", cmd_logs, true},
      {"wait", "wait for a job to end with a live line of its state, step and loss; exit 0 if it completed", cmd_wait, true},
      {"plot", "plot loss, validation loss, learning rate and samples/s of runs (PNG/SVG)", cmd_plot},
      {"report", "write how a job went as one self-contained HTML page (or --json): plan, runs, ranks, curves",
       cmd_report, true},
      {"check", "preflight on every rank of a job: GPUs per node, slow nodes, allreduce busbw (exit 1 naming bad nodes)",
       cmd_check},
      {"exclude", "in a job: record nodes to leave out (the preflight's bad nodes); --requeue requeues without them",
       cmd_exclude},
      {"completion", "print a bash, zsh or fish completion script (site names, launchers, jobs complete)",
       cmd_completion},
      {"man", "print the man page of hpclaunch or of a command, in roff", cmd_man},
  };
  return table;
}

const Command* find_command(const std::string& name) {
  for (const auto& c : commands())
    if (name == c.name) return &c;
  return nullptr;
}

}  // namespace hpclaunch
