// StepGraph with a CUDA LibTorch: see cuda_graph.h. Compiled only when the LibTorch has CUDA; t0513 compiles
// it syntax-only against Debian's headers and the CUDA toolkit's where no CUDA LibTorch is installed.
#include "cuda_graph.h"

#include <ATen/cuda/CUDAEvent.h>
#include <ATen/cuda/CUDAGraph.h>
#include <c10/cuda/CUDAGuard.h>
#include <c10/cuda/CUDAStream.h>
#include <torch/cuda.h>
#if defined(HPCTRAIN_WITH_NCCL)
#include <torch/csrc/cuda/nccl.h>
#endif

namespace hpctrain {

struct StepGraph::Impl {
  explicit Impl(const torch::Device& device)
      : side(c10::cuda::getStreamFromPool(/*isHighPriority=*/false, device.index())) {}
  c10::cuda::CUDAStream side;  // warm-up and capture run here (a capture cannot use the default stream)
  at::cuda::CUDAGraph graph;
  bool captured = false;
};

StepGraph::StepGraph(const torch::Device& device) : m_impl(std::make_unique<Impl>(device)) {}
StepGraph::~StepGraph() = default;

void StepGraph::on_side_stream(const std::function<void()>& body) {
  const c10::cuda::CUDAStream current = c10::cuda::getCurrentCUDAStream(m_impl->side.device_index());
  at::cuda::CUDAEvent before;
  before.record(current);
  before.block(m_impl->side);
  {
    c10::cuda::CUDAStreamGuard guard(m_impl->side);
    body();
  }
  at::cuda::CUDAEvent after;
  after.record(m_impl->side);
  after.block(current);
}

void StepGraph::warmup(const std::function<void()>& step) { on_side_stream(step); }

void StepGraph::capture(const std::function<void()>& step) {
  // As torch.cuda.graph: finish all queued work first, then record on the side stream into a private pool.
  // Thread-local capture mode: the loader thread (loader.h) may wait on its copy events meanwhile, which the
  // global mode forbids to every thread; the step's own work (autograd's device thread included) is recorded
  // because it goes to the capturing stream, whichever thread queues it.
  torch::cuda::synchronize(m_impl->side.device_index());
  on_side_stream([&] {
    m_impl->graph.capture_begin({0, 0}, cudaStreamCaptureModeThreadLocal);
    step();
    m_impl->graph.capture_end();
  });
  m_impl->captured = true;
}

void StepGraph::replay() { m_impl->graph.replay(); }

int64_t StepGraph::nccl_version() {
#if defined(HPCTRAIN_WITH_NCCL)
  return static_cast<int64_t>(torch::cuda::nccl::version());
#else
  return 0;
#endif
}

}  // namespace hpctrain
