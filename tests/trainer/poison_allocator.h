// Every new CPU allocation filled with NaN (0xFF bytes) while a PoisonedAllocations is alive: a tensor that is
// read before it is written shows up as NaN on any machine, instead of holding whatever the allocator's last
// user left there (a gradient came out off by 0.055 on some machines only).
#pragma once

#include <c10/core/CPUAllocator.h>
#include <torch/version.h>

#include <cstdint>
#include <cstring>

namespace hpctrain::testing {

#if TORCH_VERSION_MAJOR > 2 || (TORCH_VERSION_MAJOR == 2 && TORCH_VERSION_MINOR >= 3)
#define HPCTRAIN_ALLOCATE_CONST  // LibTorch 2.3 took const off Allocator::allocate and added copy_data
#else
#define HPCTRAIN_ALLOCATE_CONST const
#endif

class PoisonAllocator final : public c10::Allocator {
 public:
  explicit PoisonAllocator(c10::Allocator* inner) : m_inner(inner) {}
  c10::DataPtr allocate(size_t n) HPCTRAIN_ALLOCATE_CONST override {
    c10::DataPtr p = m_inner->allocate(n);
    if (n > 0) std::memset(p.get(), 0xFF, n);
    return p;
  }
  c10::DeleterFnPtr raw_deleter() const override { return m_inner->raw_deleter(); }
#if TORCH_VERSION_MAJOR > 2 || (TORCH_VERSION_MAJOR == 2 && TORCH_VERSION_MINOR >= 3)
  void copy_data(void* dest, const void* src, std::size_t count) const override {
    default_copy_data(dest, src, count);
  }
#endif

 private:
  c10::Allocator* m_inner;
};

#undef HPCTRAIN_ALLOCATE_CONST

// Installs the poisoning allocator for its lifetime (the highest priority wins, and restoring needs the same).
class PoisonedAllocations {
 public:
  PoisonedAllocations() : m_previous(c10::GetCPUAllocator()), m_poison(m_previous) {
    c10::SetCPUAllocator(&m_poison, k_priority);
  }
  ~PoisonedAllocations() { c10::SetCPUAllocator(m_previous, k_priority); }
  PoisonedAllocations(const PoisonedAllocations&) = delete;
  PoisonedAllocations& operator=(const PoisonedAllocations&) = delete;

 private:
  static constexpr uint8_t k_priority = UINT8_MAX;
  c10::Allocator* m_previous;
  PoisonAllocator m_poison;
};

}  // namespace hpctrain::testing
