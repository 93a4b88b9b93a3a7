// The optimizer the loop steps. torch::optim's Adam or SGD holds the state (what checkpoints save and load, so
// either implementation resumes the other's checkpoints); it is stepped either by torch::optim itself (loop: per
// parameter, learning rate and step count read on the host) or by the multi-tensor code here (foreach: ATen's
// _foreach_* kernels over all parameters at once, learning rate and step count in device tensors, nothing read
// back to the host, so a CUDA graph can capture the step). Python's Adam(foreach=True, capturable=True) likewise.
#pragma once
#include <torch/torch.h>

#include <memory>
#include <vector>

#include "gpu_policy.h"
#include "options.h"

namespace hpctrain {

class TrainOptimizer {
 public:
  TrainOptimizer(const TrainOptions& options, std::vector<torch::Tensor> params, OptimizerImpl impl);
  OptimizerImpl impl() const { return m_impl; }

  // Outside a capture: the learning rate of the next step(s).
  void set_lr(double lr);
  void step();

  // torch::optim's object, for checkpoints: call before_save() before saving it and after_load() after loading.
  torch::optim::Optimizer& torch_optimizer() { return *m_optimizer; }
  void before_save();
  void after_load();

 private:
  void collect_state();
  void step_adam();
  void step_sgd();

  OptimizerImpl m_impl;
  bool m_adam;
  std::unique_ptr<torch::optim::Optimizer> m_optimizer;
  std::vector<torch::Tensor> m_params;
  // foreach: the state tensors of torch::optim's per-parameter state, in parameter order.
  std::vector<torch::Tensor> m_first, m_second;  // Adam: exp_avg, exp_avg_sq; SGD: momentum_buffer, unused
  torch::Tensor m_lr;    // 0-d float64 on the parameters' device
  torch::Tensor m_step;  // 0-d float64: steps taken (Adam's bias correction)
};

}  // namespace hpctrain
