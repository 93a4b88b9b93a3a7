#include "agent/numa_topology.h"

#include <hwloc.h>

#include <algorithm>
#include <filesystem>
#include <fstream>

#include "util/error.h"
#include "util/file.h"
#include "util/strings.h"

namespace hpclaunch {

namespace {

std::vector<int> cpus_of(hwloc_const_bitmap_t set) {
  std::vector<int> out;
  for (int i = hwloc_bitmap_first(set); i >= 0; i = hwloc_bitmap_next(set, i)) out.push_back(i);
  return out;
}

int numa_node_of_bus(const std::string& bus) {
  auto text = read_file("/sys/bus/pci/devices/" + bus + "/numa_node");
  long long n = -1;
  if (!text || !parse_int(trim(*text), &n) || n < 0) return 0;  // -1: a machine with one node
  return static_cast<int>(n);
}

}  // namespace

std::vector<std::string> nvidia_gpu_buses() {
  std::vector<std::string> buses;
  std::error_code ec;
  for (const auto& e : std::filesystem::directory_iterator("/proc/driver/nvidia/gpus", ec)) {
    buses.push_back(ascii_lower(e.path().filename().string()));  // the directory is named after the PCI address
  }
  std::sort(buses.begin(), buses.end());
  return buses;
}

std::vector<std::string> visible_gpu_buses(const std::vector<std::string>& buses, const Env& env) {
  auto visible = env_get(env, "CUDA_VISIBLE_DEVICES");
  if (!visible) return buses;
  std::vector<std::string> out;
  for (const auto& item : split(*visible, ',')) {
    long long i = -1;
    if (!parse_int(trim(item), &i) || i < 0 || i >= static_cast<long long>(buses.size())) break;
    out.push_back(buses[i]);
  }
  return out;
}

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
  for (const auto& bus : visible_gpu_buses(nvidia_gpu_buses(), env)) t.gpu_numa.push_back(numa_node_of_bus(bus));
  return t;
}

}  // namespace hpclaunch
