// The loader's host-to-device side on a GPU: a copy stream of its own and an event per buffer slot, so the copy of
// batch k+1 runs while the step of batch k computes (as a DataLoader with pin_memory and a prefetching
// `.to(non_blocking=True)` on a side stream). copy_stream.cc with a CUDA LibTorch; copy_stream_none.cc otherwise,
// where nothing constructs one (the loader makes one only for a CUDA device).
#pragma once
#include <torch/torch.h>

#include <memory>

namespace hpctrain {

class CopyStream {
 public:
  CopyStream(const torch::Device& device, int slots);
  ~CopyStream();
  CopyStream(const CopyStream&) = delete;
  CopyStream& operator=(const CopyStream&) = delete;

  // Queues dst <- src (pinned host to device) on the copy stream after all work queued so far on the current
  // stream (which may still read dst's previous batch), and records slot's event after it.
  void copy(int slot, torch::Tensor& dst, const torch::Tensor& src);
  // The current stream waits, on the device, for slot's copies.
  void use(int slot);
  // The calling thread waits until slot's copies have read their host buffers (they may be refilled).
  void wait_host(int slot);

 private:
  struct Impl;
  std::unique_ptr<Impl> m_impl;
};

}  // namespace hpctrain
