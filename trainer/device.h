// The device side of a step: autocast (--amp) as a scope, memory formats (--channels-last) and host-to-device
// copies of batches (pinned memory, non_blocking, so the host goes on queueing kernels while a batch crosses);
// and the rank's CPU side: the CPUs it may use and the BLAS's thread count.
#pragma once
#include <torch/torch.h>

#include "gpu_policy.h"

namespace hpctrain {

// at::autocast's per-device switches under one name for every LibTorch from 1.13 on.
bool autocast_enabled(torch::DeviceType d);
void set_autocast_enabled(torch::DeviceType d, bool on);
at::ScalarType autocast_dtype(torch::DeviceType d);
void set_autocast_dtype(torch::DeviceType d, at::ScalarType t);

// bfloat16 autocast for the device's type while alive, as Python's `with torch.autocast(...)`: it nests, the
// previous settings come back at the end, and leaving the outermost scope clears autocast's cache of weights
// cast to bfloat16 (the cache is keyed by the weight, which the optimizer changes in place). `cache`: false
// under a CUDA graph capture, as PyTorch requires.
class AutocastScope {
 public:
  AutocastScope(bool enabled, torch::DeviceType device, bool cache = true);
  ~AutocastScope();
  AutocastScope(const AutocastScope&) = delete;
  AutocastScope& operator=(const AutocastScope&) = delete;

 private:
  bool m_enabled;
  torch::DeviceType m_device;
  bool m_was_enabled = false;
  bool m_cache_was = true;
  at::ScalarType m_dtype_was = at::kBFloat16;
};

torch::MemoryFormat to_torch(MemoryFormat format);
// The parameter tensors (convolution weights) in the --channels-last format; call before the optimizer and the
// gradient buckets are built (they follow the parameters' strides).
void apply_memory_format(torch::nn::Module& model, bool channels_last);
// A batch tensor on the device: pinned and copied non_blocking to a GPU, in the --channels-last format.
torch::Tensor to_device(const torch::Tensor& t, const torch::Device& device, bool channels_last);

// The CPUs this process may run on (its affinity mask: a Slurm task's cores), at least 1.
int available_cpus();
// Gives OpenBLAS (Debian's libopenblas0-pthread behind libblas.so.3) the same thread count as Torch's intra-op
// pool, so ranks sharing a node do not each start a pool per core; returns false when the BLAS is no OpenBLAS.
bool set_blas_threads(int threads);

}  // namespace hpctrain
