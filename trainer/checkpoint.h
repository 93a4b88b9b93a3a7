// Checkpoints: a dict written with torch::pickle_save (so Python's torch.load reads it too) holding the model
// state (parameter and buffer names as in Python), the optimizer, the schedule position, the sampler position
// and the RNG state. Written atomically by rank 0; read by every rank (a shared filesystem, as on clusters).
#pragma once
#include <torch/torch.h>

#include <limits>
#include <map>
#include <string>
#include <vector>

namespace hpctrain {

struct TrainState {
  std::string model;
  int64_t epoch = 0;         // the epoch in progress
  int64_t next_batch = 0;    // the next global batch of that epoch (== batches per epoch: the epoch's steps ran)
  int64_t global_step = 0;   // optimizer steps taken
  int64_t global_batch = 0;  // samples per step over all ranks (the sampler position needs it)
  int64_t world_size = 1;    // of the run that wrote it (informational: any world size resumes)
  uint64_t seed = 0;
  double best_val_loss = std::numeric_limits<double>::infinity();
  std::string optimizer;     // adam | sgd
};

struct Checkpoint {
  TrainState state;
  std::map<std::string, torch::Tensor> tensors;  // model state, "module." prefixes already removed
  std::vector<char> optimizer_bytes;             // torch::serialize archive of the optimizer; may be empty
  torch::Tensor rng_state;                       // CPU generator; may be undefined
};

// Serializes and writes atomically. Tensors are copied to the CPU.
void save_checkpoint(const std::string& path, torch::nn::Module& model, torch::optim::Optimizer& optimizer,
                     const TrainState& state);

// Reads our checkpoints, and also a Python state dict (optionally under "model_state" as in the seeds), with
// or without DDP's "module." prefix. Throws hpclaunch::Error naming the file.
Checkpoint read_checkpoint(const std::string& path);

// Copies the checkpoint's tensors into the model's parameters and buffers by name; a missing or misshapen one
// throws hpclaunch::Error naming the file and the key.
void load_model_state(torch::nn::Module& model, const Checkpoint& checkpoint, const std::string& path);
void load_optimizer_state(torch::optim::Optimizer& optimizer, const Checkpoint& checkpoint, torch::Device device);

// "module.net.0.weight" -> "net.0.weight"; other names unchanged.
std::string strip_module_prefix(const std::string& name);

// Writes a dict {name: tensor} with the given name prefix (tests use "module." to stand in for Python DDP).
void save_state_dict_for_test(const std::string& path, torch::nn::Module& model, const std::string& prefix);

// inspect_checkpoint and compare_checkpoints, the commands: trainer.h.

}  // namespace hpctrain
