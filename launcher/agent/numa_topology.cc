#include "agent/numa_topology.h"

#include <hwloc.h>

#include <algorithm>

#include "runtime/node_devices.h"
#include "util/error.h"

namespace hpclaunch {

namespace {

std::vector<int> cpus_of(hwloc_const_bitmap_t set) {
  std::vector<int> out;
  for (int i = hwloc_bitmap_first(set); i >= 0; i = hwloc_bitmap_next(set, i)) out.push_back(i);
  return out;
}

}  // namespace

Topology read_topology(const Env& env) {
  hwloc_topology_t topo;
  if (hwloc_topology_init(&topo) != 0 || hwloc_topology_load(topo) != 0)
    throw Error("--numa-binding", "hwloc cannot read this machine's topology", "drop --numa-binding");
  Topology t;
  int n = hwloc_get_nbobjs_by_type(topo, HWLOC_OBJ_NUMANODE);
  for (int i = 0; i < n; ++i) {
    hwloc_obj_t numa = hwloc_get_obj_by_type(topo, HWLOC_OBJ_NUMANODE, i);
    NumaDomain d;
    d.os_index = static_cast<int>(numa->os_index);
    d.cpus = cpus_of(numa->cpuset);
    if (d.cpus.empty()) continue;  // memory without CPUs (HBM, CXL)
    hwloc_obj_t package = hwloc_get_ancestor_obj_by_type(topo, HWLOC_OBJ_PACKAGE, numa->parent);
    d.package = package ? static_cast<int>(package->logical_index) : 0;
    int caches = hwloc_get_nbobjs_by_type(topo, HWLOC_OBJ_L3CACHE);
    for (int c = 0; c < caches; ++c) {
      hwloc_obj_t l3 = hwloc_get_obj_by_type(topo, HWLOC_OBJ_L3CACHE, c);
      if (!hwloc_bitmap_isincluded(l3->cpuset, numa->cpuset)) continue;
      std::vector<int> cpus = cpus_of(l3->cpuset);
      if (!cpus.empty()) d.l3.push_back(cpus);
    }
    t.domains.push_back(d);
  }
  hwloc_topology_destroy(topo);
  const Accelerator vendor = accelerator_from_env(env);
  for (const auto& gpu : visible_devices(vendor, node_devices(vendor, machine_sysfs()), env))
    t.gpu_numa.push_back(std::max(0, gpu.numa_node));  // -1: a machine with one node
  return t;
}

}  // namespace hpclaunch
