// The loop: epochs of steps, the checkpoint policy (step_policy.h), validation, and how the run ends (done,
// stopped by a signal, non-finite loss). Internal to hpclaunch-train (run.h).
#pragma once
#include "reporter.h"
#include "run.h"

namespace hpctrain {

// Trains `run` (set up by setup()) to its end; returns the exit code: k_exit_ok, k_exit_requeue (stopped by a
// signal after saving) or k_exit_nonfinite.
int run_loop(Run& run, Reporter& report);

}  // namespace hpctrain
