// Compiled (syntax only) by t0509 against every LibTorch it finds: trainer/c10d_compat.h's view of c10d must
// hold there: gloo (and NCCL when compiled in) derive from compat::Backend, and the factories type-check.
#include <type_traits>

#include "c10d_compat.h"

#if defined(HPCTRAIN_WITH_GLOO)
static_assert(std::is_base_of_v<hpctrain::compat::Backend, c10d::ProcessGroupGloo>,
              "ProcessGroupGloo no longer derives from compat::Backend: extend c10d_compat.h");
#endif
#if defined(HPCTRAIN_WITH_NCCL)
static_assert(std::is_base_of_v<hpctrain::compat::Backend, c10d::ProcessGroupNCCL>,
              "ProcessGroupNCCL no longer derives from compat::Backend: extend c10d_compat.h");
#endif

int main() {
  using namespace hpctrain::compat;
  auto store = &make_tcp_store;
  auto prefix = &make_prefix_store;
  auto gloo = &make_gloo;
  auto nccl = &make_nccl;
  (void)store, (void)prefix, (void)gloo, (void)nccl;
  BackendPtr group;
  WorkPtr work;
  (void)group, (void)work;
  return 0;
}
