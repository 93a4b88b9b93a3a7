// Training and validation data as in-memory tensors: Fashion-MNIST (IDX, gzip) from --data-dir, or synthetic
// samples of the seeds' sizes for throughput runs. A batch is gathered from a list of sample indices. Images stay
// uint8 (4x fewer bytes to gather and copy) until scale_images, on the device.
#pragma once
#include <torch/torch.h>

#include <memory>
#include <string>
#include <vector>

#include "models.h"
#include "options.h"

namespace hpctrain {

struct Batch {
  torch::Tensor input;
  torch::Tensor target;
};

class Dataset {
 public:
  // inputs/targets hold `pool` samples; sample i of `size` reads row i % pool (synthetic data repeats a pool).
  // No targets: the target is the input (the auto-encoder); a batch's target is then its input tensor.
  Dataset(torch::Tensor inputs, torch::Tensor targets, int64_t size);
  int64_t size() const { return m_size; }
  Batch gather(const std::vector<int64_t>& indices) const;
  // The same rows written into `out`, tensors of `empty_batch(indices.size())`'s shapes (reused buffers), by up to
  // `threads` threads (gather_parts).
  void gather_into(const std::vector<int64_t>& indices, Batch& out, int threads = 1) const;
  // Uninitialised tensors for a batch of `rows`, page-locked when `pinned` (for asynchronous copies to a GPU).
  Batch empty_batch(int64_t rows, bool pinned) const;

 private:
  torch::Tensor m_inputs;
  torch::Tensor m_targets;  // undefined: the target is the input (auto-encoder)
  int64_t m_size;
  int64_t m_pool;
};

struct DataSplit {
  std::unique_ptr<Dataset> train;
  std::unique_ptr<Dataset> val;
  ModelSpec spec;           // the model shaped for this data (input size, channels, classes)
  std::string description;  // one line for the log
};

DataSplit load_data(const TrainOptions& options);

// How many parts a gather of `bytes` is split into, each copied by its own thread: at most `threads` and `rows`,
// and at least 1 MiB a part, so that a small batch (Fashion-MNIST's 100 kB) stays on the one thread that asks. A
// batch of 154 MB (ResNet's 256 float images) took 10 ms through index_select and 1.7 ms in 16 parts on an H200
// machine's host (bench/trainer/gather).
int gather_parts(int64_t bytes, int64_t rows, int threads);

// An exact checksum of a batch's bytes that depends on their order (each byte times its position mod 251, plus
// one), input then target, computed where the batch lies: the same number for the same bytes on any device.
int64_t batch_checksum(const Batch& b);

// uint8 images as the model reads them, floats in [0, 1]: the IEEE float division x / 255.0f, the same bits on the
// CPU and on a GPU (and as converting the whole set once); other tensors (float samples, int64 labels) as they are.
torch::Tensor scale_images(const torch::Tensor& t);

}  // namespace hpctrain
