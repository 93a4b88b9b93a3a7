#include "dialect/cluster.h"

#include <algorithm>

namespace hpclaunch {

int NodeInfo::gpus() const {
  int n = 0;
  for (const auto& g : gres)
    if (g.name == "gpu") n += g.count;
  return n;
}

std::string ClusterInfo::release() const { return version.substr(0, version.find('.', version.find('.') + 1)); }

const PartitionInfo* ClusterInfo::find_partition(const std::string& name) const {
  for (const auto& p : partitions)
    if (p.name == name) return &p;
  return nullptr;
}

std::vector<const NodeInfo*> ClusterInfo::nodes_of(const PartitionInfo& partition) const {
  std::vector<const NodeInfo*> out;
  for (const auto& n : nodes)
    if (partition.nodes.empty() ||
        std::find(partition.nodes.begin(), partition.nodes.end(), n.name) != partition.nodes.end())
      out.push_back(&n);
  return out;
}

}  // namespace hpclaunch
