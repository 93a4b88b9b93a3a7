// The training run: device and backend choice, data, model, DDP, the step loop with its schedule, validation,
// checkpoints, signals, progress lines and metrics. main.cc parses; this does the work (trainer.cc, in rooms: run.h).
#pragma once
#include "options.h"

namespace hpctrain {

// Returns the process exit code: k_exit_ok, k_exit_requeue when stopped by a signal after saving, or
// k_exit_nonfinite. Throws hpclaunch::Error for bad input and failures.
int run_training(const TrainOptions& options, const DistEnv& env);

}  // namespace hpctrain
