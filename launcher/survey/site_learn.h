// `hpclaunch sites learn NAME`: a site profile for any Slurm (or PBS) cluster, from what its scheduler says: the
// partitions with GPU nodes, their limits, the node shape (the smallest of those nodes), typed GRES. Pure.
#pragma once
#include <string>
#include <vector>

#include "site/profile.h"
#include "survey/cluster_info.h"

namespace hpclaunch {

// The profile, marked `learned` with `date` and the commands the survey ran, and the notes a user should read
// (heterogeneous nodes, no GPU partition, ...). Throws Error when the cluster has no usable partition.
SiteProfile learn_profile(const std::string& name, const ClusterInfo& cluster, const std::string& date,
                          std::vector<std::string>* notes);

}  // namespace hpclaunch
