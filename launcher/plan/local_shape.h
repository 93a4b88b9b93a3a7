// The local site's emulated nodes take their shape from this machine and the request, not from a profile.
#pragma once
#include "plan/plan.h"

namespace hpclaunch {

// For the local site: an emulated node has the worker slots asked for (up to the profile's) and this machine's
// cores shared by all emulated nodes (oversubscribing is fine here). Any other site is returned unchanged.
SiteProfile with_machine_shape(SiteProfile site, const JobRequest& request, int machine_cores);

}  // namespace hpclaunch
