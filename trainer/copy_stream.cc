// CopyStream with a CUDA LibTorch: see copy_stream.h.
#include "copy_stream.h"

#include <ATen/cuda/CUDAEvent.h>
#include <c10/cuda/CUDAGuard.h>
#include <c10/cuda/CUDAStream.h>

#include <vector>

namespace hpctrain {

struct CopyStream::Impl {
  Impl(const torch::Device& device, int slots)
      : stream(c10::cuda::getStreamFromPool(/*isHighPriority=*/false, device.index())), copied(slots) {}
  c10::cuda::CUDAStream current() const { return c10::cuda::getCurrentCUDAStream(stream.device_index()); }
  c10::cuda::CUDAStream stream;
  std::vector<at::cuda::CUDAEvent> copied;  // per slot: its last copy is done
  at::cuda::CUDAEvent queued;               // the current stream's work before a slot's copies (made once)
  int open_slot = -1;                       // the slot whose copies copy() is queueing
};

CopyStream::CopyStream(const torch::Device& device, int slots) : m_impl(std::make_unique<Impl>(device, slots)) {}
CopyStream::~CopyStream() { m_impl->stream.synchronize(); }  // no copy may outlive the buffers

void CopyStream::copy(int slot, torch::Tensor& dst, const torch::Tensor& src) {
  if (m_impl->open_slot != slot) {  // the first copy of this slot's batch: after what the current stream queued
    m_impl->queued.record(m_impl->current());
    m_impl->queued.block(m_impl->stream);
    m_impl->open_slot = slot;
  }
  {
    c10::cuda::CUDAStreamGuard guard(m_impl->stream);
    dst.copy_(src, /*non_blocking=*/true);
  }
  m_impl->copied[static_cast<size_t>(slot)].record(m_impl->stream);
}

void CopyStream::use(int slot) {
  m_impl->copied[static_cast<size_t>(slot)].block(m_impl->current());
  m_impl->open_slot = -1;
}

void CopyStream::wait_host(int slot) { m_impl->copied[static_cast<size_t>(slot)].synchronize(); }

}  // namespace hpctrain
