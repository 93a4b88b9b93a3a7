// The step: forward, backward with the bucketed allreduce, and the optimizer step if every rank agrees; eager, or
// as a CUDA graph's warm-up, capture and replays (--cuda-graphs). Internal to hpclaunch-train (run.h).
#pragma once
#include <torch/torch.h>

#include "data.h"
#include "run.h"

namespace hpctrain {

// What every rank knows after a step's allreduce (the control slots' means).
struct StepResult {
  double loss = 0.0;          // mean over ranks
  bool nonfinite = false;     // some rank's loss was NaN or infinite
  bool stop = false;          // some rank got SIGUSR1/SIGTERM
  bool save = false;          // some rank got SIGUSR2
  torch::Tensor my_nonfinite; // this rank's own flag (on the device)
};

// One step: eager, or a warm-up, the capture or a replay of the graph (gpu_policy.h's graph_phase). Returns
// whether the optimizer step was taken already (always under --cuda-graphs).
StepResult run_step(Run& run, const Batch& b, bool poison, bool* optimizer_stepped);

}  // namespace hpctrain
