// Requests that arrive as signals: SIGUSR1/SIGTERM (Slurm's warning before the time limit, preemption) ask to
// finish the step, save and exit for requeue; SIGUSR2 asks for a checkpoint now and to go on. A second
// SIGTERM/SIGUSR1 restores the default action, so a stuck process can still be killed.
#pragma once

namespace hpctrain {

void install_signal_handlers();
bool stop_requested();
// True once per SIGUSR2 (reading clears it).
bool take_save_request();
// For tests: what a signal would do.
void request_stop_for_test();

}  // namespace hpctrain
