#include "site/profile.h"

#include <algorithm>

namespace hpclaunch {

bool SiteProfile::allows(LaunchMode m) const {
  return std::find(launchers.begin(), launchers.end(), m) != launchers.end();
}

const Queue* SiteProfile::find_queue(const std::string& queue_name) const {
  for (const auto& q : queues)
    if (q.name == queue_name) return &q;
  return nullptr;
}

const Queue* SiteProfile::default_queue() const {
  for (const auto& q : queues)
    if (q.is_default) return &q;
  return nullptr;
}

}  // namespace hpclaunch
