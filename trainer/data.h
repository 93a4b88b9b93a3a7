// Training and validation data as in-memory tensors: Fashion-MNIST (IDX, gzip) from --data-dir, or synthetic
// samples of the seeds' sizes for throughput runs. A batch is gathered from a list of sample indices.
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
  Dataset(torch::Tensor inputs, torch::Tensor targets, int64_t size);
  int64_t size() const { return m_size; }
  Batch gather(const std::vector<int64_t>& indices) const;

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

}  // namespace hpctrain
