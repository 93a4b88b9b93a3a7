// Gradient buckets as DDP plans them: parameters in reverse registration order (the order backward produces
// their gradients), grouped by dtype and device, each bucket closed once it reaches the cap (the first
// bucket has a smaller cap so communication starts early). Pure, no Torch.
#pragma once
#include <cstdint>
#include <string>
#include <vector>

namespace hpctrain {

struct ParamInfo {
  int64_t bytes = 0;
  std::string kind;  // dtype and device, e.g. "float/cpu": only parameters of one kind share a bucket
};

// Returns buckets in launch order; each holds parameter indices (into `params`) in the order they sit in the
// bucket. Every parameter is in exactly one bucket. A parameter larger than the cap gets a bucket of its own.
std::vector<std::vector<size_t>> plan_buckets(const std::vector<ParamInfo>& params, int64_t cap_bytes,
                                              int64_t first_cap_bytes);

}  // namespace hpctrain
