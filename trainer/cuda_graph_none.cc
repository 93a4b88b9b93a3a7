// StepGraph without CUDA (a CPU LibTorch): see cuda_graph.h.
#include "cuda_graph.h"

#include "util/error.h"

namespace hpctrain {

struct StepGraph::Impl {};

StepGraph::StepGraph(const torch::Device&) {
  throw hpclaunch::Error("--cuda-graphs", "this hpclaunch-train was built against a LibTorch without CUDA",
                         "build it against a CUDA PyTorch (docs/trainer.md) or drop --cuda-graphs");
}
StepGraph::~StepGraph() = default;
void StepGraph::on_side_stream(const std::function<void()>& body) { body(); }
void StepGraph::warmup(const std::function<void()>& step) { step(); }
void StepGraph::capture(const std::function<void()>&) {}
void StepGraph::replay() {}
int64_t StepGraph::nccl_version() { return 0; }

}  // namespace hpctrain
