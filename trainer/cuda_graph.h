// --cuda-graphs: the whole training step (forward, backward with its NCCL allreduces, the foreach optimizer step)
// recorded once as a CUDA graph and replayed every step after, so a step costs one launch instead of thousands
// (PyTorch's "whole network capture": warm-up on a side stream, capture, replay with static inputs). The
// decisions (when, what is refused) are gpu_policy.h's; this is the CUDA side: cuda_graph.cc with a CUDA
// LibTorch, cuda_graph_none.cc otherwise (there the constructor throws, and check_gpu_flags refuses
// --cuda-graphs on the CPU before that).
#pragma once
#include <torch/torch.h>

#include <cstdint>
#include <functional>
#include <memory>

namespace hpctrain {

class StepGraph {
 public:
  explicit StepGraph(const torch::Device& device);
  ~StepGraph();
  StepGraph(const StepGraph&) = delete;
  StepGraph& operator=(const StepGraph&) = delete;

  // `body` on the side stream the capture will use: the side stream first waits for the current one's work, and
  // the current stream then waits for the side one's. What must be made there: the gradient reducer, whose hooks
  // autograd runs on the stream their AccumulateGrad nodes were made on (on the default stream, the captured
  // backward would make the legacy stream wait on the capturing one, and the capture fails; torch.cuda.graphs'
  // DDP recipe likewise builds DDP under the side stream).
  void on_side_stream(const std::function<void()>& body);
  // An eager step on that side stream (NCCL's communicators and the optimizer's state are made here).
  void warmup(const std::function<void()>& step);
  // Records `step` on the side stream (nothing runs: replay() then does the step).
  void capture(const std::function<void()>& step);
  void replay();

  // What torch::cuda::nccl::version() says (0 without NCCL); gpu_policy.h decodes it.
  static int64_t nccl_version();

 private:
  struct Impl;
  std::unique_ptr<Impl> m_impl;
};

}  // namespace hpctrain
