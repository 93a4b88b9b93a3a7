// Reads this node's topology for --numa-binding: NUMA nodes, packages and L3 caches from hwloc (restricted to
// the CPUs this process may use), and the NUMA node of each GPU from sysfs, in CUDA_VISIBLE_DEVICES' order.
#pragma once
#include "agent/numa_binding.h"
#include "util/environment.h"

namespace hpclaunch {

// Throws Error naming --numa-binding when hwloc cannot read the machine.
Topology read_topology(const Env& env);

// NVIDIA GPUs' PCI addresses in bus order ("0000:3b:00.0"), from /proc/driver/nvidia/gpus; empty without them.
std::vector<std::string> nvidia_gpu_buses();

// The GPUs a process sees, in CUDA order: entries of CUDA_VISIBLE_DEVICES that are indexes into `buses` (other
// forms, UUIDs or MIG names, end the list, as CUDA stops at the first it cannot use), else every bus. Pure.
std::vector<std::string> visible_gpu_buses(const std::vector<std::string>& buses, const Env& env);

}  // namespace hpclaunch
