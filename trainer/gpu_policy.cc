// The GPU step's decisions: see gpu_policy.h.
#include "gpu_policy.h"

#include "util/error.h"

namespace hpctrain {

using hpclaunch::Error;

std::string choose_backend(const std::string& requested, bool cuda, int world_size, BuiltBackends built) {
  const std::string backend = requested != "auto" ? requested : cuda && built.nccl ? "nccl" : "gloo";
  if (backend == "xccl") {
    // Intel GPUs' collectives (oneCCL through torch's XPU build). This trainer's LibTorch builds have no XPU: say
    // what the build has, and where a user's own xccl script runs (the launcher sets what oneCCL needs).
    std::string have = built.gloo ? "gloo" : "";
    if (built.nccl) have += have.empty() ? "nccl" : ", nccl";
    throw Error("--backend",
                "xccl (Intel GPUs) is not in this build: its LibTorch has no XPU (this build has " +
                    (have.empty() ? std::string("no collectives: one CPU rank") : have) + ")",
                "run a torch XPU script under `hpclaunch agent` or `hpclaunch exec`, or use a backend this build has");
  }
  if (backend == "nccl") {
    if (!cuda) throw Error("--backend", "nccl needs CUDA tensors but the device is the CPU", "use --backend gloo");
    if (!built.nccl)
      throw Error("--backend", "nccl is not in this build (LibTorch without CUDA)", "use --backend gloo");
    return backend;
  }
  if (built.gloo) return backend;
  if (requested == "auto" && world_size == 1) return "none";
  throw Error("--backend", "gloo is not in this build (its LibTorch has no gloo headers, as the pip wheels)",
              cuda ? "use --backend nccl, or rebuild with -DHPCLAUNCH_GLOO_INCLUDE_DIR=DIR (docs/trainer.md)"
                   : "rebuild with -DHPCLAUNCH_GLOO_INCLUDE_DIR=DIR naming gloo's headers (docs/trainer.md), "
                     "or run on GPUs");
}

void check_gpu_flags(const GpuRun& run) {
  const char* gpu_flag = run.amp ? "--amp" : run.channels_last ? "--channels-last" : run.cuda_graphs ? "--cuda-graphs" : nullptr;
  if (gpu_flag != nullptr && !run.cuda)
    throw Error(gpu_flag, "only for CUDA devices and this run is on the CPU", "drop the flag on CPU runs");
  if (!run.cuda_graphs) return;
  if (run.backend == "gloo" && run.world_size > 1)
    throw Error("--cuda-graphs", "gloo's collectives run on CPU threads and cannot be captured in a CUDA graph",
                "use --backend nccl or drop --cuda-graphs");
  if (run.on_nonfinite == "skip-step")
    throw Error("--cuda-graphs", "a captured step always takes the optimizer step, so --on-nonfinite skip-step cannot skip it",
                "use --on-nonfinite stop with --cuda-graphs, or drop --cuda-graphs");
  if (run.optimizer_impl == "loop")
    throw Error("--cuda-graphs", "--optimizer-impl loop reads the learning rate and step count on the host, which a graph would freeze",
                "use --optimizer-impl foreach (the default on a GPU)");
}

OptimizerImpl choose_optimizer_impl(const GpuRun& run) {
  if (run.optimizer_impl == "foreach") return OptimizerImpl::foreach;
  if (run.optimizer_impl == "loop") return OptimizerImpl::loop;
  return run.cuda ? OptimizerImpl::foreach : OptimizerImpl::loop;
}

MemoryFormat memory_format_for(int64_t dim, bool channels_last) {
  if (!channels_last) return MemoryFormat::contiguous;
  if (dim == 4) return MemoryFormat::channels_last;
  if (dim == 5) return MemoryFormat::channels_last_3d;
  return MemoryFormat::contiguous;
}

GraphPhase graph_phase(bool cuda_graphs, int64_t steps_done) {
  if (!cuda_graphs) return GraphPhase::eager;
  if (steps_done < k_graph_warmup_steps) return GraphPhase::warmup;
  return steps_done == k_graph_warmup_steps ? GraphPhase::capture : GraphPhase::replay;
}

namespace {
struct NcclVersion {
  int64_t major, minor, patch;
};
NcclVersion decode(int64_t code) {
  if (code >= (int64_t{1} << 32)) return {code >> 32, (code >> 16) & 0xffff, code & 0xffff};
  if (code >= 20900) return {code / 10000, code % 10000 / 100, code % 100};
  return {code / 1000, code % 1000 / 100, code % 100};
}
}  // namespace

bool nccl_can_be_captured(int64_t code) {
  const NcclVersion v = decode(code);
  if (v.major != 2) return v.major > 2;
  return v.minor > 9 || (v.minor == 9 && v.patch >= 6);
}

std::string nccl_version_text(int64_t code) {
  const NcclVersion v = decode(code);
  return std::to_string(v.major) + "." + std::to_string(v.minor) + "." + std::to_string(v.patch);
}

std::vector<std::pair<std::string, std::string>> nccl_capture_environment(
    const GpuRun& run, const std::function<const char*(const char*)>& getenv, bool new_name) {
  if (!run.cuda_graphs || run.backend != "nccl" || run.world_size == 1) return {};
  const char* const read = new_name ? "TORCH_NCCL_ASYNC_ERROR_HANDLING" : "NCCL_ASYNC_ERROR_HANDLING";
  for (const char* name : {"TORCH_NCCL_ASYNC_ERROR_HANDLING", "NCCL_ASYNC_ERROR_HANDLING"}) {
    const char* value = getenv(name);
    if (value != nullptr && *value != '\0' && std::string(value) != "0")
      throw Error(name, std::string("is ") + value + ", but a captured step cannot be watched by NCCL's error handler",
                  std::string("unset it (--cuda-graphs sets ") + read + "=0) or drop --cuda-graphs");
  }
  return {{read, "0"}};
}

}  // namespace hpctrain
