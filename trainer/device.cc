// Autocast scope, memory formats, host-to-device copies, CPUs and BLAS threads: see device.h.
#include "device.h"

#include <ATen/autocast_mode.h>
#include <dlfcn.h>
#include <sched.h>
#include <torch/version.h>

#include <algorithm>
#include <thread>

namespace hpctrain {

// set_enabled/set_cpu_enabled in LibTorch 1.13 to 2.3, one function taking the device type from 2.4 on (the old
// ones are deprecated there).
#if TORCH_VERSION_MAJOR > 2 || (TORCH_VERSION_MAJOR == 2 && TORCH_VERSION_MINOR >= 4)
bool autocast_enabled(torch::DeviceType d) { return at::autocast::is_autocast_enabled(d); }
void set_autocast_enabled(torch::DeviceType d, bool on) { at::autocast::set_autocast_enabled(d, on); }
at::ScalarType autocast_dtype(torch::DeviceType d) { return at::autocast::get_autocast_dtype(d); }
void set_autocast_dtype(torch::DeviceType d, at::ScalarType t) { at::autocast::set_autocast_dtype(d, t); }
#else
bool autocast_enabled(torch::DeviceType d) {
  return d == torch::kCUDA ? at::autocast::is_enabled() : at::autocast::is_cpu_enabled();
}
void set_autocast_enabled(torch::DeviceType d, bool on) {
  if (d == torch::kCUDA) at::autocast::set_enabled(on);
  else at::autocast::set_cpu_enabled(on);
}
at::ScalarType autocast_dtype(torch::DeviceType d) {
  return d == torch::kCUDA ? at::autocast::get_autocast_gpu_dtype() : at::autocast::get_autocast_cpu_dtype();
}
void set_autocast_dtype(torch::DeviceType d, at::ScalarType t) {
  if (d == torch::kCUDA) at::autocast::set_autocast_gpu_dtype(t);
  else at::autocast::set_autocast_cpu_dtype(t);
}
#endif

AutocastScope::AutocastScope(bool enabled, torch::DeviceType device, bool cache) : m_enabled(enabled), m_device(device) {
  if (!m_enabled) return;
  m_was_enabled = autocast_enabled(device);
  m_dtype_was = autocast_dtype(device);
  m_cache_was = at::autocast::is_autocast_cache_enabled();
  set_autocast_enabled(device, true);
  set_autocast_dtype(device, at::kBFloat16);
  at::autocast::set_autocast_cache_enabled(cache);
  at::autocast::increment_nesting();
}

AutocastScope::~AutocastScope() {
  if (!m_enabled) return;
  if (at::autocast::decrement_nesting() == 0) at::autocast::clear_cache();
  set_autocast_enabled(m_device, m_was_enabled);
  set_autocast_dtype(m_device, m_dtype_was);
  at::autocast::set_autocast_cache_enabled(m_cache_was);
}

torch::MemoryFormat to_torch(MemoryFormat format) {
  switch (format) {
    case MemoryFormat::channels_last: return torch::MemoryFormat::ChannelsLast;
    case MemoryFormat::channels_last_3d: return torch::MemoryFormat::ChannelsLast3d;
    case MemoryFormat::contiguous: break;
  }
  return torch::MemoryFormat::Contiguous;
}

void apply_memory_format(torch::nn::Module& model, bool channels_last) {
  if (!channels_last) return;
  torch::NoGradGuard no_grad;
  for (auto& p : model.parameters()) {
    const MemoryFormat format = memory_format_for(p.dim(), true);
    if (format != MemoryFormat::contiguous) p.set_data(p.data().contiguous(to_torch(format)));
  }
}

torch::Tensor to_device(const torch::Tensor& t, const torch::Device& device, bool channels_last) {
  torch::Tensor out = t;
  // An asynchronous copy needs pinned pages (a batch already on the GPU, the loader's, needs no copy).
  if (device.is_cuda() && out.is_cpu() && !out.is_pinned()) out = out.pin_memory();
  out = out.to(device, /*non_blocking=*/true);
  const MemoryFormat format = memory_format_for(out.dim(), channels_last);
  if (format != MemoryFormat::contiguous) out = out.contiguous(to_torch(format));
  return out;
}

int available_cpus() {
  cpu_set_t set;
  if (sched_getaffinity(0, sizeof set, &set) == 0) return std::max(1, CPU_COUNT(&set));
  return static_cast<int>(std::max(1u, std::thread::hardware_concurrency()));
}

bool set_blas_threads(int threads) {
  using SetThreads = void (*)(int);
  auto* set = reinterpret_cast<SetThreads>(dlsym(RTLD_DEFAULT, "openblas_set_num_threads"));
  if (set == nullptr) return false;
  set(threads);
  return true;
}

}  // namespace hpctrain
