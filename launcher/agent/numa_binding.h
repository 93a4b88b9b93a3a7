// torchrun's --numa-binding: the CPUs each worker is bound to, from the node's topology (NUMA nodes, their
// package, their L3 caches) and the NUMA node of each worker's GPU. Pure: numa_topology.cc reads the machine.
#pragma once
#include <string>
#include <vector>

namespace hpclaunch {

// none: workers inherit the agent's CPUs. node: all CPUs of the NUMA node of the worker's GPU. socket: all CPUs
// of that node's package. exclusive: that node's CPUs split into disjoint shares among the workers on it.
// core-complex: one L3 cache's CPUs of that node (its caches dealt out in turn to the workers on it).
enum class NumaBinding { none, node, socket, exclusive, core_complex };

// "node", "socket", "exclusive", "core-complex" (torchrun's spellings, core_complex too). Throws Error naming
// --numa-binding otherwise.
NumaBinding parse_numa_binding(const std::string& text);

struct NumaDomain {
  int os_index = 0;                    // the kernel's NUMA node number
  int package = 0;                     // the socket it belongs to
  std::vector<int> cpus;               // the CPUs this process may use, ascending
  std::vector<std::vector<int>> l3;    // its CPUs grouped by shared L3 cache; empty when unknown
};

struct Topology {
  std::vector<NumaDomain> domains;     // NUMA nodes with usable CPUs
  std::vector<int> gpu_numa;           // the NUMA node (os_index) of each visible GPU, in its runtime's order
};

// The NUMA domain (index into t.domains) of worker `local_rank` of `nproc`: its GPU's node when the GPU is known,
// else the ranks dealt out in blocks (ranks 0-1 on node 0 and 2-3 on node 1 for 4 workers and 2 nodes).
int worker_domain(const Topology& t, int local_rank, int nproc);

// The CPUs of each of `nproc` workers, in local-rank order; every list empty for `none`. Throws Error naming
// --numa-binding when the topology has no NUMA node, or `exclusive` has more workers than CPUs on a node.
std::vector<std::vector<int>> bind_workers(const Topology& t, NumaBinding binding, int nproc);

}  // namespace hpclaunch
