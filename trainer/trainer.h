// What main.cc calls, without LibTorch's headers (main.cc compiles in 1 s, not the 10 s torch/torch.h costs): the
// training run (device and backend choice, data, model, DDP, the step loop with its schedule, validation,
// checkpoints, signals, progress lines and metrics; trainer.cc, in rooms: run.h) and the checkpoint commands
// (checkpoint.cc). main.cc parses; these do the work.
#pragma once
#include <string>

#include "options.h"

namespace hpctrain {

// Returns the process exit code: k_exit_ok, k_exit_requeue when stopped by a signal after saving, or
// k_exit_nonfinite. Throws hpclaunch::Error for bad input and failures.
int run_training(const TrainOptions& options, const DistEnv& env);

// `hpclaunch-train inspect FILE`: prints the checkpoint's position and tensor count as one JSON line; returns 0.
int inspect_checkpoint(const std::string& path);
// `hpclaunch-train compare A B`: 0 when every common tensor agrees within `tolerance`, 1 otherwise.
int compare_checkpoints(const std::string& a, const std::string& b, double tolerance);

}  // namespace hpctrain
