#include "agent/heartbeat.h"

#include <algorithm>

namespace hpclaunch {

namespace {

using std::chrono::milliseconds;

milliseconds longest_interval(milliseconds timeout) {
  return std::max(k_min_heartbeat_interval, timeout / k_heartbeats_per_timeout);
}

}  // namespace

milliseconds heartbeat_interval(size_t agents, milliseconds timeout) {
  // Whole tenths of a second, rounded up: the announced value moves in steps of 200 agents, not with every one.
  const auto tenths = static_cast<long long>((agents * 10 + k_store_heartbeats_per_second - 1) /
                                             k_store_heartbeats_per_second);
  const milliseconds by_load{tenths * 100};
  const milliseconds cap = longest_interval(timeout);
  return std::min(std::max(k_min_heartbeat_interval, by_load), std::max(k_min_heartbeat_interval, cap / 100 * 100));
}

milliseconds adopt_heartbeat_interval(long long announced_ms, milliseconds timeout, milliseconds current) {
  if (announced_ms < k_min_heartbeat_interval.count() || announced_ms > longest_interval(timeout).count()) return current;
  return milliseconds(announced_ms);
}

}  // namespace hpclaunch
