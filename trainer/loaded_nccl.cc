// The loaded NCCL's version: see loaded_nccl.h.
#include "loaded_nccl.h"

#include <dlfcn.h>

namespace hpctrain {

int64_t loaded_nccl_version() {
  using GetVersion = int (*)(int*);
  auto* get = reinterpret_cast<GetVersion>(dlsym(RTLD_DEFAULT, "ncclGetVersion"));
  int code = 0;
  if (get == nullptr || get(&code) != 0) return 0;  // ncclSuccess is 0
  return code;
}

}  // namespace hpctrain
