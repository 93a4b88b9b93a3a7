// Gradient bucket planning: see bucket_plan.h.
#include "bucket_plan.h"

#include <algorithm>
#include <map>

namespace hpctrain {

std::vector<std::vector<size_t>> plan_buckets(const std::vector<ParamInfo>& params, int64_t cap_bytes,
                                              int64_t first_cap_bytes) {
  struct Open {
    std::vector<size_t> members;
    int64_t bytes = 0;
  };
  std::vector<std::vector<size_t>> closed;
  std::map<std::string, Open> open;  // one filling bucket per kind
  for (size_t n = params.size(); n-- > 0;) {
    Open& bucket = open[params[n].kind];
    bucket.members.push_back(n);
    bucket.bytes += params[n].bytes;
    const int64_t cap = closed.empty() ? first_cap_bytes : cap_bytes;
    if (bucket.bytes >= cap) {
      closed.push_back(std::move(bucket.members));
      open.erase(params[n].kind);
    }
  }
  // What is left closes in the order its last member arrived: smallest remaining index last.
  std::vector<std::pair<size_t, std::vector<size_t>>> rest;
  for (auto& entry : open) rest.emplace_back(entry.second.members.back(), std::move(entry.second.members));
  std::sort(rest.begin(), rest.end(), [](const auto& a, const auto& b) { return a.first > b.first; });
  for (auto& entry : rest) closed.push_back(std::move(entry.second));
  return closed;
}

}  // namespace hpctrain
