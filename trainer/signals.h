// Requests that arrive as signals: SIGUSR1/SIGTERM (Slurm's warning before the time limit, preemption) ask to
// finish the step, save and exit for requeue; SIGUSR2 asks for a checkpoint now and to go on. A second
// SIGTERM/SIGUSR1 kills the process with that signal, so a stuck process can still be stopped; the same signal again
// within 2 s is the same stop passed on twice (a Slurm step's slurmstepd and an agent both pass on scancel's
// SIGTERM), not a second one.
//
// The signals are blocked in every thread and taken by one thread in sigwait(), so they never interrupt a
// system call: a warning that lands while the process group forms (gloo and the TCPStore poll() without retrying
// on EINTR) or inside a collective is simply noted and acted on at the next step.
#pragma once

namespace hpctrain {

// Call first thing in main(), before any other thread exists (threads inherit the blocked set).
void install_signal_handlers();
bool stop_requested();
// True once per SIGUSR2 (reading clears it).
bool take_save_request();
// For tests: what a signal would do.
void request_stop_for_test();

}  // namespace hpctrain
