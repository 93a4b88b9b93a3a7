// One training run's state, shared by the rooms of the trainer: setup.cc fills it (device, data, model,
// optimizer, DDP, resume), step.cc runs a step on it, reporter.cc reports from it, loop.cc drives the epochs, and
// trainer.cc (run_training) ties them together. Internal to hpclaunch-train: nothing outside trainer/ includes it.
#pragma once
#include <torch/torch.h>

#include <chrono>
#include <cstdint>
#include <memory>
#include <string>
#include <vector>

#include "checkpoint.h"
#include "cuda_graph.h"
#include "data.h"
#include "ddp.h"
#include "device.h"
#include "gpu_policy.h"
#include "loader.h"
#include "models.h"
#include "optimizer.h"
#include "options.h"
#include "schedule.h"

namespace hpctrain {

using Clock = std::chrono::steady_clock;

inline double since(Clock::time_point start) {
  return std::chrono::duration<double>(Clock::now() - start).count();
}

struct Run {
  const TrainOptions& o;
  const DistEnv& env;
  torch::Device device{torch::kCPU};
  std::unique_ptr<Communicator> comm;
  DataSplit data;
  std::shared_ptr<TrainModel> model;
  std::unique_ptr<TrainOptimizer> optimizer;
  std::unique_ptr<GradientReducer> reducer;
  std::vector<torch::Tensor> buffers;
  BatchPlan batch;
  LrSchedule schedule;
  TrainState state;
  int64_t steps_per_epoch = 0;
  GpuRun gpu;                        // the GPU step's flags and what they apply to (gpu_policy.h)
  std::unique_ptr<StepGraph> graph;  // --cuda-graphs
  int64_t steps_this_process = 0;    // the graph's warm-up and capture count from here
  // The step's inputs and outputs: under --cuda-graphs static (the graph reads and writes these addresses).
  struct {
    torch::Tensor input, target;
    torch::Tensor flags;         // on the device: stop, save, loss factor (1, or NaN from the test hook)
    torch::Tensor host_flags;    // the same on the host (pinned for a GPU)
    torch::Tensor my_nonfinite;  // this rank's loss was not finite (written by the step)
  } step;
  int threads = 1;        // intra-op and BLAS threads of this rank
  bool openblas = false;  // the BLAS is OpenBLAS and got the same count
  std::unique_ptr<BatchLoader> loader;  // the training batches (reads data.train: declared after it)
  bool rank0() const { return env.rank == 0; }
  std::string latest_path() const { return o.checkpoint_dir + "/latest.pt"; }
};

// A batch tensor on the run's device, in its memory format (device.h).
inline torch::Tensor to_device(const torch::Tensor& t, const Run& run) {
  return to_device(t, run.device, run.o.channels_last);
}

// A batch as the model reads it: on the run's device (the loader's are there already), uint8 images scaled
// (scale_images), in the --channels-last format. The auto-encoder's target stays its input.
inline Batch model_batch(const Batch& b, const Run& run) {
  Batch out;
  out.input = scale_images(to_device(b.input, run));
  out.target = b.target.is_same(b.input) ? out.input : scale_images(to_device(b.target, run));
  return out;
}

// The sampler of this rank's training batches (the loader's, and --check-batches' own).
inline DistributedSampler train_sampler(const Run& run) {
  return DistributedSampler(run.data.train->size(), run.env.world_size, run.env.rank, run.o.shuffle, run.o.seed);
}

// setup.cc: the rank's resources and the input checks, then connect, resume, model, optimizer, schedule and DDP,
// and rank 0's header lines. Throws hpclaunch::Error for bad input before connecting where it can.
void setup(Run& run);

}  // namespace hpctrain
