// `hpclaunch sites check NAME` and `sites learn NAME`: the profile against the live scheduler, and a profile
// written from it (survey/).
#pragma once
#include <string>

#include "site/registry.h"

namespace hpclaunch {

// Prints the comparison (a table, or JSON); returns 1 when a mismatch would fail or misplace a job, else 0.
int sites_check(const SiteRegistry& sites, const std::string& name, bool json);
// Prints (or writes to `output`) a profile learned from this cluster's scheduler; notes go to stderr.
int sites_learn(const std::string& name, const std::string& output);

}  // namespace hpclaunch
