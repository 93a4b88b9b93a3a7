// The NCCL this process loaded at run time (LibTorch's), for `--version`: it can differ from the header the trainer
// was compiled with (on the first GPU machine the header said 2.28.3 while torch loaded 2.28.9).
#pragma once
#include <cstdint>

namespace hpctrain {

// ncclGetVersion's code (found by name: nothing links NCCL for it), 0 where no NCCL is loaded (a CPU LibTorch).
int64_t loaded_nccl_version();

}  // namespace hpctrain
