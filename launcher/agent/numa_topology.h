// Reads this node's topology for --numa-binding: NUMA nodes, packages and L3 caches from hwloc (restricted to
// the CPUs this process may use), and the NUMA node of each GPU this process sees, in its vendor's order
// (HPCLAUNCH_ACCELERATOR; runtime/node_devices.h reads sysfs).
#pragma once
#include "agent/numa_binding.h"
#include "util/environment.h"

namespace hpclaunch {

// Throws Error naming --numa-binding when hwloc cannot read the machine.
Topology read_topology(const Env& env);

}  // namespace hpclaunch
