#include "agent/numa_binding.h"

#include <fmt/core.h>

#include <algorithm>
#include <set>

#include "util/error.h"

namespace hpclaunch {

NumaBinding parse_numa_binding(const std::string& text) {
  if (text == "node") return NumaBinding::node;
  if (text == "socket") return NumaBinding::socket;
  if (text == "exclusive") return NumaBinding::exclusive;
  if (text == "core-complex" || text == "core_complex") return NumaBinding::core_complex;
  throw Error("--numa-binding", "'" + text + "' is not a binding", "use node, socket, exclusive or core-complex");
}

int worker_domain(const Topology& t, int local_rank, int nproc) {
  int n = static_cast<int>(t.domains.size());
  if (local_rank < static_cast<int>(t.gpu_numa.size()))
    for (int d = 0; d < n; ++d)
      if (t.domains[d].os_index == t.gpu_numa[local_rank]) return d;
  return std::min(n - 1, local_rank * n / std::max(1, nproc));
}

namespace {

// The workers of each domain, in local-rank order, and each worker's place among them.
struct Sharing {
  std::vector<int> count;   // workers per domain
  std::vector<int> place;   // per worker: its index among its domain's workers
};

Sharing share(const std::vector<int>& domain_of) {
  Sharing s;
  for (int d : domain_of) {
    if (d >= static_cast<int>(s.count.size())) s.count.resize(d + 1, 0);
    s.place.push_back(s.count[d]++);
  }
  return s;
}

}  // namespace

std::vector<std::vector<int>> bind_workers(const Topology& t, NumaBinding binding, int nproc) {
  std::vector<std::vector<int>> out(std::max(0, nproc));
  if (binding == NumaBinding::none) return out;
  if (t.domains.empty()) throw Error("--numa-binding", "this machine shows no NUMA node with usable CPUs", "drop it");
  std::vector<int> domain_of;
  for (int lr = 0; lr < nproc; ++lr) domain_of.push_back(worker_domain(t, lr, nproc));
  Sharing s = share(domain_of);
  for (int lr = 0; lr < nproc; ++lr) {
    const NumaDomain& d = t.domains[domain_of[lr]];
    int sharers = s.count[domain_of[lr]], place = s.place[lr];
    switch (binding) {
      case NumaBinding::node:
        out[lr] = d.cpus;
        break;
      case NumaBinding::socket: {
        std::set<int> cpus;
        for (const auto& other : t.domains)
          if (other.package == d.package) cpus.insert(other.cpus.begin(), other.cpus.end());
        out[lr].assign(cpus.begin(), cpus.end());
        break;
      }
      case NumaBinding::exclusive: {
        int n = static_cast<int>(d.cpus.size());
        if (sharers > n)
          throw Error("--numa-binding", fmt::format("exclusive: {} workers share NUMA node {} of {} CPU(s)", sharers,
                                                    d.os_index, n),
                      "use --numa-binding node, or fewer workers per node");
        // Contiguous shares, the first n % sharers workers one CPU larger.
        int begin = place * (n / sharers) + std::min(place, n % sharers);
        int size = n / sharers + (place < n % sharers ? 1 : 0);
        out[lr].assign(d.cpus.begin() + begin, d.cpus.begin() + begin + size);
        break;
      }
      case NumaBinding::core_complex:
        out[lr] = d.l3.empty() ? d.cpus : d.l3[place % d.l3.size()];
        break;
      case NumaBinding::none:
        break;
    }
  }
  return out;
}

}  // namespace hpclaunch
