// A node's GPUs by vendor (runtime/node_devices.h) on sysfs layouts recorded as files: an MI250X node as the
// Frontier and LUMI-G guides draw it (8 GCDs, two on each of the 4 NUMA nodes, ROCr's order not the NUMA order),
// an Aurora node (6 Max 1550 cards of 2 tiles, 3 on each socket), and an NVIDIA node; which of them a process
// sees under each vendor's variables, the NUMA node each worker is bound near, the preflight's count, and what
// torch counts for torchrun's --nproc-per-node.
#include <doctest/doctest.h>
#include <fmt/core.h>

#include <map>
#include <set>

#include "agent/numa_binding.h"
#include "runtime/node_devices.h"

namespace runtime_node_devices_test {  // this file's names, apart from its unity batch's others (tests/CMakeLists.txt)

using namespace hpclaunch;

TEST_SUITE_BEGIN("runtime node devices");

namespace {

// Files by path; a folder lists the names found under it.
class RecordedSysfs final : public SysfsView {
 public:
  std::map<std::string, std::string> files;
  std::optional<std::string> read(const std::string& path) const override {
    auto it = files.find(path);
    return it == files.end() ? std::nullopt : std::optional<std::string>(it->second);
  }
  std::vector<std::string> list(const std::string& dir) const override {
    std::set<std::string> names;
    for (const auto& [path, text] : files)
      if (path.size() > dir.size() + 1 && path.compare(0, dir.size() + 1, dir + "/") == 0)
        names.insert(path.substr(dir.size() + 1, path.find('/', dir.size() + 1) - dir.size() - 1));
    return {names.begin(), names.end()};
  }
};

// KFD nodes 0-3 are the CPU's NUMA nodes, 4-11 the GCDs in ROCr's order; GCD k's bus and NUMA node below.
const char* const k_gcd_bus[] = {"c1", "c6", "c9", "ce", "d1", "d6", "d9", "de"};
const int k_gcd_numa[] = {3, 3, 1, 1, 0, 0, 2, 2};

RecordedSysfs mi250x_node(bool with_kfd = true) {
  RecordedSysfs s;
  const std::string nodes = "/sys/class/kfd/kfd/topology/nodes/";
  for (int n = 0; n < 4; ++n)
    s.files[nodes + std::to_string(n) + "/properties"] =
        "cpu_cores_count 16\nsimd_count 0\nmem_banks_count 1\nlocation_id 0\ndomain 0\nunique_id 0\n";
  for (int k = 0; k < 8; ++k) {
    int bus = std::stoi(k_gcd_bus[k], nullptr, 16);
    s.files[nodes + std::to_string(4 + k) + "/properties"] = fmt::format(
        "cpu_cores_count 0\nsimd_count 440\nlocation_id {}\ndomain 0\nunique_id {}\nnum_xcc 1\n", bus << 8,
        0x1000 + k);
    std::string pci = fmt::format("0000:{}:00.0", k_gcd_bus[k]);
    s.files["/sys/bus/pci/devices/" + pci + "/numa_node"] = std::to_string(k_gcd_numa[k]) + "\n";
    // drm numbers the cards in probe order, card0 being the BMC's display: not ROCr's order.
    std::string card = "/sys/class/drm/card" + std::to_string(8 - k);
    s.files[card + "/device/vendor"] = "0x1002\n";
    s.files[card + "/device/uevent"] = "DRIVER=amdgpu\nPCI_CLASS=38000\nPCI_SLOT_NAME=" + pci + "\n";
  }
  s.files["/sys/class/drm/card0/device/vendor"] = "0x1a03\n";
  s.files["/sys/class/drm/card0/device/uevent"] = "DRIVER=ast\nPCI_SLOT_NAME=0000:02:00.0\n";
  if (!with_kfd)
    for (auto it = s.files.begin(); it != s.files.end();)
      it = it->first.starts_with("/sys/class/kfd") ? s.files.erase(it) : std::next(it);
  return s;
}

// Six cards of two tiles (i915: card/gt/gt0, gt1), cards 0-2 on socket 0 and 3-5 on socket 1; render nodes and
// connectors beside them.
RecordedSysfs aurora_node(bool xe = false) {
  RecordedSysfs s;
  const char* const buses[] = {"0000:18:00.0", "0000:42:00.0", "0000:6c:00.0",
                               "0001:18:00.0", "0001:42:00.0", "0001:6c:00.0"};
  for (int c = 0; c < 6; ++c) {
    std::string card = "/sys/class/drm/card" + std::to_string(c);
    s.files[card + "/device/vendor"] = "0x8086\n";
    s.files[card + "/device/uevent"] = std::string("DRIVER=") + (xe ? "xe" : "i915") + "\nPCI_SLOT_NAME=" + buses[c] + "\n";
    for (int t = 0; t < 2; ++t)
      s.files[card + (xe ? "/device/tile" : "/gt/gt") + std::to_string(t) + (xe ? "/gt0/id" : "/id")] = "0\n";
    s.files["/sys/class/drm/renderD" + std::to_string(128 + c) + "/device/vendor"] = "0x8086\n";
    s.files[card + "-DP-1/status"] = "disconnected\n";
    s.files["/sys/bus/pci/devices/" + std::string(buses[c]) + "/numa_node"] = c < 3 ? "0\n" : "1\n";
  }
  return s;
}

RecordedSysfs nvidia_node() {
  RecordedSysfs s;
  const char* const buses[] = {"0000:85:00.0", "0000:07:00.0", "0000:46:00.0"};
  for (int g = 0; g < 3; ++g) {
    s.files[std::string("/proc/driver/nvidia/gpus/") + buses[g] + "/information"] =
        fmt::format("Model: \t\t NVIDIA A100\nGPU UUID: \t GPU-{}aaa-bbb\nBus Location: \t {}\n", g, buses[g]);
    s.files[std::string("/sys/bus/pci/devices/") + buses[g] + "/numa_node"] = std::to_string(g) + "\n";
  }
  return s;
}

std::vector<std::string> buses(const std::vector<GpuDevice>& devices) {
  std::vector<std::string> out;
  for (const auto& d : devices) out.push_back(d.bus + (d.tile >= 0 ? "/" + std::to_string(d.tile) : ""));
  return out;
}

std::vector<int> numa(const std::vector<GpuDevice>& devices) {
  std::vector<int> out;
  for (const auto& d : devices) out.push_back(d.numa_node);
  return out;
}

// Four NUMA nodes of 16 CPUs, each its own L3, and the GPUs' nodes as the process sees them.
Topology four_nodes(const std::vector<GpuDevice>& visible) {
  Topology t;
  for (int n = 0; n < 4; ++n) {
    NumaDomain d;
    d.os_index = n;
    for (int c = 0; c < 16; ++c) d.cpus.push_back(16 * n + c);
    t.domains.push_back(d);
  }
  for (const auto& g : visible) t.gpu_numa.push_back(std::max(0, g.numa_node));
  return t;
}

}  // namespace

TEST_CASE("AMD: ROCr's order is the KFD topology's GPU nodes, each with its bus's NUMA node") {
  auto devices = node_devices(Accelerator::amd, mi250x_node());
  CHECK(buses(devices) == std::vector<std::string>{"0000:c1:00.0", "0000:c6:00.0", "0000:c9:00.0", "0000:ce:00.0",
                                                   "0000:d1:00.0", "0000:d6:00.0", "0000:d9:00.0", "0000:de:00.0"});
  CHECK(numa(devices) == std::vector<int>{3, 3, 1, 1, 0, 0, 2, 2});
  CHECK(devices[2].uuid == "GPU-0000000000001002");
  // Without the KFD tree: the amdgpu cards of /sys/class/drm in bus order (the BMC's display left out).
  CHECK(buses(node_devices(Accelerator::amd, mi250x_node(false))) == buses(devices));
  CHECK(node_devices(Accelerator::nvidia, mi250x_node()).empty());
  CHECK(node_devices(Accelerator::intel, mi250x_node()).empty());
}

TEST_CASE("AMD: ROCR_VISIBLE_DEVICES selects, HIP_VISIBLE_DEVICES (or CUDA_VISIBLE_DEVICES) numbers within it") {
  auto devices = node_devices(Accelerator::amd, mi250x_node());
  CHECK(visible_devices(Accelerator::amd, devices, {}).size() == 8);
  auto rocr = visible_devices(Accelerator::amd, devices, {{"ROCR_VISIBLE_DEVICES", "4,5,0"}});
  CHECK(numa(rocr) == std::vector<int>{0, 0, 3});
  auto hip = visible_devices(Accelerator::amd, devices, {{"ROCR_VISIBLE_DEVICES", "4,5,0"}, {"HIP_VISIBLE_DEVICES", "2"}});
  CHECK(buses(hip) == std::vector<std::string>{"0000:c1:00.0"});
  CHECK(buses(visible_devices(Accelerator::amd, devices, {{"CUDA_VISIBLE_DEVICES", "7"}})) ==
        std::vector<std::string>{"0000:de:00.0"});
  // A UUID as rocminfo prints it; an entry that names no device ends the list.
  CHECK(buses(visible_devices(Accelerator::amd, devices, {{"ROCR_VISIBLE_DEVICES", "GPU-0000000000001007,9,1"}})) ==
        std::vector<std::string>{"0000:de:00.0"});
}

TEST_CASE("AMD: the agent binds each worker near its GCD, not by blocks of local ranks") {
  auto devices = node_devices(Accelerator::amd, mi250x_node());
  auto cpus = bind_workers(four_nodes(visible_devices(Accelerator::amd, devices, {})), NumaBinding::node, 8);
  CHECK(cpus[0].front() == 48);  // GCD 0 is on NUMA node 3
  CHECK(cpus[2].front() == 16);
  CHECK(cpus[4].front() == 0);
  CHECK(cpus[7].front() == 32);
  // Slurm gave the job GCDs 4-7: worker 0 is near GCD 4, on node 0.
  auto given = visible_devices(Accelerator::amd, devices, {{"ROCR_VISIBLE_DEVICES", "4,5,6,7"}});
  CHECK(bind_workers(four_nodes(given), NumaBinding::node, 4)[2].front() == 32);
}

TEST_CASE("Intel: Level Zero's FLAT hierarchy makes each tile a device; COMPOSITE keeps the cards") {
  for (bool xe : {false, true}) {
    CAPTURE(xe);
    auto cards = node_devices(Accelerator::intel, aurora_node(xe));
    REQUIRE(cards.size() == 6);
    CHECK(cards[0].tiles == 2);
    auto tiles = visible_devices(Accelerator::intel, cards, {});
    REQUIRE(tiles.size() == 12);
    CHECK(buses(tiles)[7] == "0001:18:00.0/1");
    CHECK(numa(tiles) == std::vector<int>{0, 0, 0, 0, 0, 0, 1, 1, 1, 1, 1, 1});
  }
  auto cards = node_devices(Accelerator::intel, aurora_node());
  CHECK(buses(visible_devices(Accelerator::intel, cards, {{"ZE_AFFINITY_MASK", "6,11"}})) ==
        std::vector<std::string>{"0001:18:00.0/0", "0001:6c:00.0/1"});
  Env composite = {{"ZE_FLAT_DEVICE_HIERARCHY", "COMPOSITE"}};
  CHECK(visible_devices(Accelerator::intel, cards, composite).size() == 6);
  composite["ZE_AFFINITY_MASK"] = "4.1,4.0,1";
  CHECK(buses(visible_devices(Accelerator::intel, cards, composite)) ==
        std::vector<std::string>{"0001:42:00.0", "0000:42:00.0"});
  CHECK(node_devices(Accelerator::amd, aurora_node()).empty());
}

TEST_CASE("NVIDIA: CUDA_VISIBLE_DEVICES indexes the buses in order, or names a UUID, and stops at what it cannot use") {
  auto devices = node_devices(Accelerator::nvidia, nvidia_node());
  CHECK(buses(devices) == std::vector<std::string>{"0000:07:00.0", "0000:46:00.0", "0000:85:00.0"});
  CHECK(numa(devices) == std::vector<int>{1, 2, 0});
  CHECK(buses(visible_devices(Accelerator::nvidia, devices, {{"CUDA_VISIBLE_DEVICES", "2,0"}})) ==
        std::vector<std::string>{"0000:85:00.0", "0000:07:00.0"});
  CHECK(buses(visible_devices(Accelerator::nvidia, devices, {{"CUDA_VISIBLE_DEVICES", "1,GPU-abc,0"}})) ==
        std::vector<std::string>{"0000:46:00.0"});
  CHECK(buses(visible_devices(Accelerator::nvidia, devices, {{"CUDA_VISIBLE_DEVICES", "GPU-2aaa,7"}})) ==
        std::vector<std::string>{"0000:46:00.0"});
  CHECK(node_devices(Accelerator::amd, nvidia_node()).empty());
}

TEST_CASE("the preflight's count: the vendor's devices on AMD and Intel nodes, torch's on NVIDIA") {
  auto tiles = node_devices(Accelerator::intel, aurora_node());
  // Aurora under PALS: no list, each rank bound by exec to its tile; the node has 12.
  Env bound = {{"ZE_AFFINITY_MASK", "3"}, {"HPCLAUNCH_NODE_LOCAL_RANK", "3"}, {"ZE_FLAT_DEVICE_HIERARCHY", "FLAT"}};
  CHECK(preflight_gpu_count(Accelerator::intel, tiles, bound) == 12);
  CHECK(preflight_gpu_count(Accelerator::intel, tiles, {}) == 12);
  CHECK(preflight_gpu_count(Accelerator::intel, tiles, {{"ZE_FLAT_DEVICE_HIERARCHY", "COMPOSITE"}}) == 6);
  CHECK(preflight_gpu_count(Accelerator::intel, tiles, {{"ZE_AFFINITY_MASK", "0,1,2,3"}}) == 4);
  // No device in sysfs (a container without /sys): the vendor's list as the job gives it.
  CHECK(preflight_gpu_count(Accelerator::intel, {}, {{"ZE_AFFINITY_MASK", "0,1,2,3,4,5,6,7,8,9,10,11"}}) == 12);
  CHECK(preflight_gpu_count(Accelerator::intel, {}, {}) == 0);
  auto gcds = node_devices(Accelerator::amd, mi250x_node());
  CHECK(preflight_gpu_count(Accelerator::amd, gcds, {{"ROCR_VISIBLE_DEVICES", "0,1,2,3"}}) == 4);
  CHECK(preflight_gpu_count(Accelerator::amd, gcds, {{"ROCR_VISIBLE_DEVICES", "5"}, {"HPCLAUNCH_NODE_LOCAL_RANK", "5"}}) == 8);
  CHECK(preflight_gpu_count(Accelerator::amd, {}, {{"ROCR_VISIBLE_DEVICES", "0,1,2,3,4,5,6,7"}}) == 8);
  CHECK(preflight_gpu_count(Accelerator::amd, {}, {{"HIP_VISIBLE_DEVICES", "0,1"}}) == 2);
  CHECK_FALSE(preflight_gpu_count(Accelerator::nvidia, node_devices(Accelerator::nvidia, nvidia_node()), {}));
}

TEST_CASE("torchrun's --nproc-per-node gpu and xpu: what torch counts, by vendor, under the variables") {
  // Aurora: 12 XPU devices (tiles), not its 6 cards; a mask keeps its entries.
  CHECK(torch_device_counts(aurora_node(), {}).xpu == 12);
  CHECK(torch_device_counts(aurora_node(), {}).cuda == 0);
  CHECK(torch_device_counts(aurora_node(), {{"ZE_AFFINITY_MASK", "0,1"}}).xpu == 2);
  CHECK(torch_device_counts(aurora_node(), {{"ZE_FLAT_DEVICE_HIERARCHY", "COMPOSITE"}}).xpu == 6);
  // An MI250X node: ROCm's torch numbers its GCDs as CUDA devices.
  CHECK(torch_device_counts(mi250x_node(), {}).cuda == 8);
  CHECK(torch_device_counts(mi250x_node(), {{"ROCR_VISIBLE_DEVICES", "0,1,2"}}).cuda == 3);
  CHECK(torch_device_counts(mi250x_node(), {}).xpu == 0);
  CHECK(torch_device_counts(nvidia_node(), {{"CUDA_VISIBLE_DEVICES", "1"}}).cuda == 1);
}

TEST_SUITE_END();

}  // namespace runtime_node_devices_test
