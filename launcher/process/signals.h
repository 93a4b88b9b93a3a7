// The one list of signals that a launcher (the agent, the local runner, `local-srun`) passes on to what it started.
#pragma once
#include <vector>

namespace hpclaunch {

// TERM, INT, HUP, QUIT (stops) and USR1, USR2 (a checkpoint notice, such as Slurm's --signal).
const std::vector<int>& forwarded_signals();
// SIGUSR1/SIGUSR2: a notice for the children (checkpoint now), not a stop.
bool is_notice_signal(int sig);

}  // namespace hpclaunch
