#include "runtime/node_devices.h"

#include <fmt/core.h>

#include <algorithm>
#include <map>
#include <set>

#include "dialect/in_job.h"  // count_device_list
#include "util/strings.h"

namespace hpclaunch {

namespace {

constexpr const char* k_kfd_nodes_dir = "/sys/class/kfd/kfd/topology/nodes";
constexpr const char* k_drm_dir = "/sys/class/drm";

std::optional<long long> sysfs_number(const std::optional<std::string>& text) {
  long long n = 0;
  if (!text || !parse_int(trim(*text), &n)) return std::nullopt;
  return n;
}

// "0x1002" (a PCI vendor file) as a number.
std::optional<long long> sysfs_hex(const std::optional<std::string>& text) {
  if (!text) return std::nullopt;
  std::string s(trim(*text));
  if (s.size() < 3 || s.compare(0, 2, "0x") != 0) return std::nullopt;
  try {
    size_t used = 0;
    long long n = std::stoll(s.substr(2), &used, 16);
    return used == s.size() - 2 ? std::optional<long long>(n) : std::nullopt;
  } catch (...) {
    return std::nullopt;
  }
}

int bus_numa_node(const SysfsView& sys, const std::string& bus) {
  auto n = sysfs_number(sys.read("/sys/bus/pci/devices/" + bus + "/numa_node"));
  return n && *n >= 0 ? static_cast<int>(*n) : -1;
}

// Names of `dir`'s entries that are `prefix` and a number, ordered by that number.
std::vector<std::string> numbered_entries(const SysfsView& sys, const std::string& dir, const std::string& prefix) {
  std::vector<std::pair<long long, std::string>> found;
  for (const auto& name : sys.list(dir)) {
    long long n = -1;
    if (name.size() > prefix.size() && name.compare(0, prefix.size(), prefix) == 0 &&
        parse_int(name.substr(prefix.size()), &n) && n >= 0)
      found.emplace_back(n, name);
  }
  std::sort(found.begin(), found.end());
  std::vector<std::string> out;
  for (auto& f : found) out.push_back(f.second);
  return out;
}

std::vector<GpuDevice> nvidia_proc_gpus(const SysfsView& sys) {
  std::vector<GpuDevice> out;
  for (const auto& name : sys.list("/proc/driver/nvidia/gpus")) {  // each folder named after its PCI address
    GpuDevice d;
    d.bus = ascii_lower(name);
    d.numa_node = bus_numa_node(sys, d.bus);
    if (auto info = sys.read("/proc/driver/nvidia/gpus/" + name + "/information"))
      for (const auto& line : split(*info, '\n'))
        if (line.starts_with("GPU UUID:")) d.uuid = std::string(trim(line.substr(9)));
    out.push_back(d);
  }
  std::sort(out.begin(), out.end(), [](const GpuDevice& a, const GpuDevice& b) { return a.bus < b.bus; });
  return out;
}

// The "key value" lines of a KFD topology node's properties file.
std::map<std::string, long long> kfd_node_properties(const std::string& text) {
  std::map<std::string, long long> out;
  for (const auto& line : split(text, '\n')) {
    size_t space = line.find(' ');
    long long v = 0;
    if (space != std::string::npos && parse_int(trim(line.substr(space + 1)), &v)) out[line.substr(0, space)] = v;
  }
  return out;
}

// ROCr numbers the GPU nodes of the KFD topology in node order (CPU nodes have no SIMDs); location_id is the PCI
// bus, device and function as bus << 8 | device << 3 | function.
std::vector<GpuDevice> kfd_gpu_nodes(const SysfsView& sys) {
  std::vector<GpuDevice> out;
  for (const auto& node : numbered_entries(sys, k_kfd_nodes_dir, "")) {
    auto text = sys.read(std::string(k_kfd_nodes_dir) + "/" + node + "/properties");
    if (!text) continue;
    auto p = kfd_node_properties(*text);
    if (p["simd_count"] <= 0) continue;
    long long loc = p["location_id"];
    GpuDevice d;
    d.bus = fmt::format("{:04x}:{:02x}:{:02x}.{:x}", p["domain"], (loc >> 8) & 0xff, (loc >> 3) & 0x1f, loc & 7);
    d.numa_node = bus_numa_node(sys, d.bus);
    // rocminfo's "Uuid: GPU-..." and what ROCR_VISIBLE_DEVICES accepts: the unique_id in 16 hex digits.
    if (p.count("unique_id") && p["unique_id"] != 0) d.uuid = fmt::format("GPU-{:016x}", p["unique_id"]);
    out.push_back(d);
  }
  return out;
}

std::string pci_slot_name(const std::optional<std::string>& uevent) {
  if (uevent)
    for (const auto& line : split(*uevent, '\n'))
      if (line.starts_with("PCI_SLOT_NAME=")) return ascii_lower(std::string(trim(line.substr(14))));
  return "";
}

// The cards of /sys/class/drm (card0, card1: not their connectors or render nodes) of one PCI vendor, bus order.
std::vector<GpuDevice> drm_cards_of(const SysfsView& sys, long long vendor) {
  std::vector<GpuDevice> out;
  for (const auto& card : numbered_entries(sys, k_drm_dir, "card")) {
    std::string dir = std::string(k_drm_dir) + "/" + card;
    if (sysfs_hex(sys.read(dir + "/device/vendor")) != vendor) continue;
    GpuDevice d;
    d.bus = pci_slot_name(sys.read(dir + "/device/uevent"));
    if (d.bus.empty()) continue;
    d.numa_node = bus_numa_node(sys, d.bus);
    // Level Zero's sub-devices: one gt folder per tile under i915, one tile folder under xe.
    int tiles = static_cast<int>(numbered_entries(sys, dir + "/gt", "gt").size());
    if (tiles == 0) tiles = static_cast<int>(numbered_entries(sys, dir + "/device", "tile").size());
    d.tiles = std::max(1, tiles);
    out.push_back(d);
  }
  std::sort(out.begin(), out.end(), [](const GpuDevice& a, const GpuDevice& b) { return a.bus < b.bus; });
  return out;
}

// Level Zero's FLAT hierarchy (its default) makes each tile a device; COMPOSITE and COMBINED keep cards.
bool ze_flat_hierarchy(const Env& env) {
  auto v = env_get(env, "ZE_FLAT_DEVICE_HIERARCHY");
  return !v || v->empty() || *v == "FLAT";
}

std::vector<GpuDevice> tiles_as_devices(const std::vector<GpuDevice>& cards) {
  std::vector<GpuDevice> out;
  for (const auto& c : cards)
    for (int t = 0; t < c.tiles; ++t) {
      GpuDevice d = c;
      d.tiles = 1;
      d.tile = t;
      out.push_back(d);
    }
  return out;
}

// One entry of a visibility list: an index into `devices`, or a UUID (or the start of one, as CUDA takes).
std::optional<size_t> listed_device(const std::vector<GpuDevice>& devices, std::string_view entry) {
  std::string e = ascii_lower(std::string(trim(entry)));
  long long i = -1;
  if (parse_int(e, &i)) return i >= 0 && i < static_cast<long long>(devices.size()) ? std::optional<size_t>(i) : std::nullopt;
  if (e.empty()) return std::nullopt;
  for (size_t k = 0; k < devices.size(); ++k)
    if (!devices[k].uuid.empty() && ascii_lower(devices[k].uuid).starts_with(e)) return k;
  return std::nullopt;
}

// `devices` selected by the list in `variable`, in the list's order; all of them when it is unset.
std::vector<GpuDevice> select_listed(const std::vector<GpuDevice>& devices, const Env& env, const std::string& variable) {
  auto list = env_get(env, variable);
  if (!list) return devices;
  std::vector<GpuDevice> out;
  for (const auto& entry : split(*list, ',')) {
    auto k = listed_device(devices, entry);
    if (!k) break;
    out.push_back(devices[*k]);
  }
  return out;
}

// ZE_AFFINITY_MASK under COMPOSITE or COMBINED: "N" a card, "N.M" tile M of card N, which Level Zero still shows
// as card N (with that sub-device): each card once, in the mask's order.
std::vector<GpuDevice> select_ze_cards(const std::vector<GpuDevice>& cards, const std::string& mask) {
  std::vector<GpuDevice> out;
  std::set<long long> seen;
  for (const auto& entry : split(mask, ',')) {
    std::string e(trim(entry));
    std::string card = e.substr(0, e.find('.'));
    long long i = -1;
    if (!parse_int(card, &i) || i < 0 || i >= static_cast<long long>(cards.size())) break;
    if (seen.insert(i).second) out.push_back(cards[static_cast<size_t>(i)]);
  }
  return out;
}

}  // namespace

std::vector<GpuDevice> node_devices(Accelerator vendor, const SysfsView& sys) {
  switch (vendor) {
    case Accelerator::nvidia: return nvidia_proc_gpus(sys);
    case Accelerator::amd: {
      auto kfd = kfd_gpu_nodes(sys);
      return kfd.empty() ? drm_cards_of(sys, 0x1002) : kfd;
    }
    case Accelerator::intel: return drm_cards_of(sys, 0x8086);
  }
  return {};
}

std::vector<GpuDevice> visible_devices(Accelerator vendor, const std::vector<GpuDevice>& devices, const Env& env) {
  switch (vendor) {
    case Accelerator::nvidia: return select_listed(devices, env, "CUDA_VISIBLE_DEVICES");
    case Accelerator::amd: {
      auto rocr = select_listed(devices, env, "ROCR_VISIBLE_DEVICES");
      return select_listed(rocr, env, env_has(env, "HIP_VISIBLE_DEVICES") ? "HIP_VISIBLE_DEVICES" : "CUDA_VISIBLE_DEVICES");
    }
    case Accelerator::intel: {
      if (ze_flat_hierarchy(env)) return select_listed(tiles_as_devices(devices), env, "ZE_AFFINITY_MASK");
      auto mask = env_get(env, "ZE_AFFINITY_MASK");
      return mask ? select_ze_cards(devices, *mask) : devices;
    }
  }
  return {};
}

std::optional<int> preflight_gpu_count(Accelerator vendor, const std::vector<GpuDevice>& devices, const Env& env) {
  if (vendor == Accelerator::nvidia) return std::nullopt;
  const bool bound = env_has(env, "HPCLAUNCH_NODE_LOCAL_RANK");
  if (!devices.empty()) {
    if (!bound) return static_cast<int>(visible_devices(vendor, devices, env).size());
    // A bound rank's variables name its own device; the node's are all those its runtime would number.
    Env unselected;
    if (auto h = env_get(env, "ZE_FLAT_DEVICE_HIERARCHY")) unselected["ZE_FLAT_DEVICE_HIERARCHY"] = *h;
    return static_cast<int>(visible_devices(vendor, devices, unselected).size());
  }
  auto list = visible_device_list(env, device_visibility(vendor));
  return list ? count_device_list(*list) : 0;
}

TorchDeviceCounts torch_device_counts(const SysfsView& sys, const Env& env) {
  TorchDeviceCounts c;
  c.cuda = static_cast<int>(visible_devices(Accelerator::nvidia, node_devices(Accelerator::nvidia, sys), env).size());
  if (c.cuda == 0)
    c.cuda = static_cast<int>(visible_devices(Accelerator::amd, node_devices(Accelerator::amd, sys), env).size());
  c.xpu = static_cast<int>(visible_devices(Accelerator::intel, node_devices(Accelerator::intel, sys), env).size());
  return c;
}

}  // namespace hpclaunch
