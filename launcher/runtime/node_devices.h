// A node's GPUs as their vendor's runtime numbers them (site/accelerator.h), and which of them a process sees:
// read through SysfsView, so the rules run on recorded sysfs layouts as well as on the machine. For the agent's
// --numa-binding (each worker's GPU's NUMA node) and the preflight's GPU count of an AMD or Intel node.
#pragma once
#include <optional>
#include <string>
#include <vector>

#include "site/accelerator.h"
#include "util/environment.h"

namespace hpclaunch {

// The files the rules read ("/sys/...", "/proc/..."): the machine's, or a recorded layout in the tests.
class SysfsView {
 public:
  virtual ~SysfsView() = default;
  virtual std::optional<std::string> read(const std::string& path) const = 0;  // nullopt: no such file
  virtual std::vector<std::string> list(const std::string& dir) const = 0;     // entry names; empty: no such folder
};
const SysfsView& machine_sysfs();

struct GpuDevice {
  std::string bus;     // PCI address, "0000:c1:00.0"
  int numa_node = -1;  // the kernel's NUMA node of the bus; -1 unknown (one node, or no sysfs entry)
  int tiles = 1;       // Level Zero's sub-devices of an Intel card (Max 1550: 2)
  int tile = -1;       // a visible device that is one tile of its card (Level Zero's FLAT hierarchy); -1 a card
  std::string uuid;    // how a visibility variable may name it ("GPU-..."); empty when unknown
};

// The node's devices of `vendor`, in the order its runtime numbers them when no variable selects: NVIDIA's
// /proc/driver/nvidia/gpus (bus order); AMD's KFD topology GPU nodes (ROCr's order), else /sys/class/drm cards of
// vendor 0x1002; Intel's /sys/class/drm cards of vendor 0x8086 with their tiles (i915's gt/gtN, xe's tileN). Bus
// order where the vendor's tree gives none. Empty when sysfs shows none (a container without /sys, no driver).
std::vector<GpuDevice> node_devices(Accelerator vendor, const SysfsView& sys);

// What a process with `env` sees of `devices`, in its runtime's order: CUDA_VISIBLE_DEVICES; ROCR_VISIBLE_DEVICES,
// then HIP_VISIBLE_DEVICES (or CUDA_VISIBLE_DEVICES, which HIP also reads) numbering within ROCr's selection;
// ZE_AFFINITY_MASK over tiles under ZE_FLAT_DEVICE_HIERARCHY=FLAT (Level Zero's default) or over cards ("N", or
// "N.M" for one tile) under COMPOSITE and COMBINED. An entry that names no device ends the list, as the runtimes
// stop at it. Pure.
std::vector<GpuDevice> visible_devices(Accelerator vendor, const std::vector<GpuDevice>& devices, const Env& env);

// The GPUs the preflight counts on an AMD or Intel node, where torch.cuda sees none (Level Zero) or only the one a
// bound rank was given: the devices the node's list selects; a rank bound to its own device (exec and Slurm's
// per-task binding set HPCLAUNCH_NODE_LOCAL_RANK) counts the node's devices; without any in sysfs, the entries of
// the vendor's list (ZE_AFFINITY_MASK=0,1,...). nullopt on NVIDIA: there torch's CUDA count is the truth. Pure.
std::optional<int> preflight_gpu_count(Accelerator vendor, const std::vector<GpuDevice>& devices, const Env& env);

// What torch would count here, for torchrun's --nproc-per-node gpu, xpu and auto: CUDA devices (NVIDIA's, or AMD's,
// which a ROCm build numbers as CUDA devices) and XPU devices (Intel's: 12 tiles on an Aurora node under FLAT),
// each as this process's variables select them. Pure over `sys`.
struct TorchDeviceCounts {
  int cuda = 0;
  int xpu = 0;
};
TorchDeviceCounts torch_device_counts(const SysfsView& sys, const Env& env);

}  // namespace hpclaunch
