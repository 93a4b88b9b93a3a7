// The GPU step's decisions, apart from the CUDA calls (trainer/cuda_graph.cc, trainer/trainer.cc): which flags a
// run may use (--amp, --channels-last, --cuda-graphs, --optimizer-impl), the memory format of a tensor, the
// optimizer implementation, when the whole step is captured, and the NCCL settings a capture needs. Pure logic,
// unit-tested on any machine (tests/trainer/gpu_policy_test.cc).
#pragma once
#include <cstdint>
#include <functional>
#include <string>
#include <utility>
#include <vector>

namespace hpctrain {

// What the decisions depend on: the flags and what the run found (device, backend, world).
struct GpuRun {
  bool cuda = false;                  // the device is a GPU
  std::string backend = "gloo";       // gloo | nccl
  int world_size = 1;
  bool amp = false;
  bool channels_last = false;
  bool cuda_graphs = false;
  std::string optimizer_impl = "auto";  // auto | loop | foreach
  std::string on_nonfinite = "stop";
};

// The collectives compiled in: gloo where the LibTorch's headers (or HPCLAUNCH_GLOO_INCLUDE_DIR) had it, NCCL with
// a CUDA LibTorch (c10d_compat.h's k_have_gloo, k_have_nccl).
struct BuiltBackends {
  bool gloo = true;
  bool nccl = false;
};

// --backend auto|gloo|nccl|xccl for a run on a GPU (`cuda`) or the CPU with `world_size` ranks: auto is NCCL on a GPU,
// gloo on the CPU. A world of one forms no process group, so a CPU run of one rank needs no gloo ("none"). Throws
// hpclaunch::Error naming --backend for what cannot run: NCCL on the CPU or in a build without it; gloo asked
// for, or needed across ranks on the CPU, in a build without it (a pip wheel's LibTorch: docs/trainer.md); xccl
// (Intel GPUs), which no build of this trainer has, naming the backends the build has.
std::string choose_backend(const std::string& requested, bool cuda, int world_size, BuiltBackends built);

// Throws hpclaunch::Error naming the flag (one line: what is wrong, the fix) for a combination that cannot run:
// --amp/--channels-last/--cuda-graphs on the CPU; --cuda-graphs with gloo across ranks (gloo's collectives run
// on CPU threads and cannot be captured), with --on-nonfinite skip-step (a captured step always takes the
// optimizer step; skipping it is a host decision) or with --optimizer-impl loop (torch::optim reads the
// learning rate and step count on the host, so a graph would replay the first step's values).
void check_gpu_flags(const GpuRun& run);

enum class OptimizerImpl { loop, foreach };
// --optimizer-impl auto: foreach (multi-tensor, learning rate and step count on the device) on a GPU, where it
// saves kernel launches and is what a graph captures; torch::optim's per-parameter loop on the CPU, as before.
OptimizerImpl choose_optimizer_impl(const GpuRun& run);

enum class MemoryFormat { contiguous, channels_last, channels_last_3d };
// --channels-last: 4-d tensors (2-d convolution weights, image batches) NHWC, 5-d ones (the 3-d U-Net's) NDHWC.
MemoryFormat memory_format_for(int64_t dim, bool channels_last);

// --cuda-graphs: eager steps on a side stream before the capture (NCCL's communicators are created lazily by
// the first collectives, and the caching allocator settles); then step `warmup + 1` is captured and every step
// from there on replays it. PyTorch's recipe warms up 3 iterations, 11 with its DDP (whose reducer rebuilds its
// buckets during the first iterations); our reducer's buckets are fixed at construction, so 3 do here too.
inline constexpr int64_t k_graph_warmup_steps = 3;
enum class GraphPhase { eager, warmup, capture, replay };
// The phase of the step that follows `steps_done` steps of this process (resumes count from their start).
GraphPhase graph_phase(bool cuda_graphs, int64_t steps_done);

// NCCL captures collectives from 2.9.6 on (earlier ones fail the capture). `code` is what
// torch::cuda::nccl::version() returns: major<<32 | minor<<16 | patch in the PyTorch versions that pack it, or
// NCCL_VERSION_CODE (major*1000+minor*100+patch before 2.9, major*10000+minor*100+patch from 2.9 on).
bool nccl_can_be_captured(int64_t code);
std::string nccl_version_text(int64_t code);

// Before the process group forms, a capture with NCCL across ranks needs ProcessGroupNCCL's watchdog to leave
// the step's work alone: PyTorch's recipe sets NCCL_ASYNC_ERROR_HANDLING=0 (TORCH_NCCL_ASYNC_ERROR_HANDLING from
// PyTorch 2.2 on; before 2.1 the watchdog queries the events of captured work and the capture fails). Returns
// the variable to set, the one this LibTorch reads (`new_name`: 2.2 or later, which warns that the old name is
// deprecated when it is set); throws hpclaunch::Error naming the variable when the user asked for error
// handling under either name.
std::vector<std::pair<std::string, std::string>> nccl_capture_environment(
    const GpuRun& run, const std::function<const char*(const char*)>& getenv, bool new_name);

}  // namespace hpctrain
