// --numa-binding's rules (agent/numa_binding.h) on a made-up two-socket topology (the GPUs' order and NUMA nodes:
// runtime_node_devices_test.cc).
#include <doctest/doctest.h>

#include "agent/numa_binding.h"
#include "util/error.h"

namespace agent_numa_binding_test {  // this file's names, apart from its unity batch's others (tests/CMakeLists.txt)

using namespace hpclaunch;

TEST_SUITE_BEGIN("agent numa binding");

namespace {

// Two sockets, two NUMA nodes each of 4 CPUs, two L3 caches per node; GPUs 0-3 on nodes 0, 1, 2, 3.
Topology two_sockets() {
  Topology t;
  for (int n = 0; n < 4; ++n) {
    NumaDomain d;
    d.os_index = n;
    d.package = n / 2;
    for (int c = 4 * n; c < 4 * n + 4; ++c) d.cpus.push_back(c);
    d.l3 = {{4 * n, 4 * n + 1}, {4 * n + 2, 4 * n + 3}};
    t.domains.push_back(d);
  }
  return t;
}

}  // namespace

TEST_CASE("--numa-binding: each worker gets the CPUs near its GPU, by node, socket, share or L3 cache") {
  Topology t = two_sockets();
  t.gpu_numa = {3, 2, 1, 0};  // GPUs listed in reverse, as CUDA_VISIBLE_DEVICES=3,2,1,0 would
  auto node = bind_workers(t, NumaBinding::node, 4);
  CHECK(node[0] == std::vector<int>{12, 13, 14, 15});
  CHECK(node[3] == std::vector<int>{0, 1, 2, 3});
  auto socket = bind_workers(t, NumaBinding::socket, 4);
  CHECK(socket[0] == std::vector<int>{8, 9, 10, 11, 12, 13, 14, 15});
  CHECK(socket[3] == std::vector<int>{0, 1, 2, 3, 4, 5, 6, 7});
  CHECK(bind_workers(t, NumaBinding::none, 4) == std::vector<std::vector<int>>(4));

  Topology cpu_only = two_sockets();  // no GPUs: ranks dealt out in blocks, 2 per node for 8 workers
  CHECK(worker_domain(cpu_only, 0, 8) == 0);
  CHECK(worker_domain(cpu_only, 1, 8) == 0);
  CHECK(worker_domain(cpu_only, 2, 8) == 1);
  CHECK(worker_domain(cpu_only, 7, 8) == 3);
  auto excl = bind_workers(cpu_only, NumaBinding::exclusive, 8);
  CHECK(excl[0] == std::vector<int>{0, 1});
  CHECK(excl[1] == std::vector<int>{2, 3});
  CHECK(excl[7] == std::vector<int>{14, 15});
  auto ccx = bind_workers(cpu_only, NumaBinding::core_complex, 8);
  CHECK(ccx[2] == std::vector<int>{4, 5});
  CHECK(ccx[3] == std::vector<int>{6, 7});

  NumaDomain small;  // 3 CPUs for 2 workers: shares of 2 and 1
  small.cpus = {0, 1, 2};
  Topology one{{small}, {}};
  auto shares = bind_workers(one, NumaBinding::exclusive, 2);
  CHECK(shares[0] == std::vector<int>{0, 1});
  CHECK(shares[1] == std::vector<int>{2});
  CHECK_THROWS_WITH(bind_workers(one, NumaBinding::exclusive, 4),
                    doctest::Contains("--numa-binding: exclusive: 4 workers share NUMA node 0 of 3 CPU(s)"));
  CHECK(bind_workers(one, NumaBinding::core_complex, 2)[1] == std::vector<int>{0, 1, 2});  // no L3 known
  CHECK_THROWS_WITH(bind_workers(Topology{}, NumaBinding::node, 1), doctest::Contains("no NUMA node"));
  CHECK(parse_numa_binding("core_complex") == NumaBinding::core_complex);
}

TEST_SUITE_END();

}  // namespace agent_numa_binding_test
