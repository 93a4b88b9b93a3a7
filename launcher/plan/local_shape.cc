#include "plan/local_shape.h"

#include <algorithm>

#include "dialect/dialect.h"

namespace hpclaunch {

SiteProfile with_machine_shape(SiteProfile site, const JobRequest& request, int machine_cores) {
  if (!dialect_for(site.scheduler).runs_here()) return site;
  int slots = request.gpus_per_node.value_or(1);
  if (slots >= 1 && slots <= site.node.gpus) site.node.gpus = slots;
  int cores = std::max(1, machine_cores) / std::max(1, request.nodes);
  site.node.cores = std::max({cores, site.node.gpus, 1});
  return site;
}

}  // namespace hpclaunch
