// CopyStream without CUDA (a CPU LibTorch): see copy_stream.h. The loader never makes one for the CPU.
#include "copy_stream.h"

#include "util/error.h"

namespace hpctrain {

struct CopyStream::Impl {};

CopyStream::CopyStream(const torch::Device&, int) {
  throw hpclaunch::failure("--device", "this hpclaunch-train was built against a LibTorch without CUDA",
                           "build it against a CUDA PyTorch (docs/trainer.md)");
}
CopyStream::~CopyStream() = default;
void CopyStream::copy(int, torch::Tensor&, const torch::Tensor&) {}
void CopyStream::use(int) {}
void CopyStream::wait_host(int) {}

}  // namespace hpctrain
