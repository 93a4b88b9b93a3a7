// Whose GPUs a site has, and how each vendor's runtime is told which of a node's devices a process may use: one
// table, read by everything that ties a GPU to a rank (runtime/gpu_bind.h, the agent's workers, the preflight's
// GPU count). A profile names its vendor (node.accelerator); the script passes it on as HPCLAUNCH_ACCELERATOR.
#pragma once
#include <optional>
#include <string>
#include <vector>

#include "util/enum_names.h"
#include "util/environment.h"

namespace hpclaunch {

enum class Accelerator { nvidia, amd, intel };
inline const EnumNames<Accelerator> k_accelerator_names = {
    {"nvidia", Accelerator::nvidia}, {"amd", Accelerator::amd}, {"intel", Accelerator::intel}};
inline const char* to_string(Accelerator a) { return name_of(k_accelerator_names, a); }

struct DeviceVisibility {
  Accelerator vendor;
  // Where a node's device list may already be, most physical first: ROCm's ROCR_VISIBLE_DEVICES selects the
  // devices and HIP_VISIBLE_DEVICES then numbers within that selection, so a list read from the second would be
  // renumbered a second time if written into the first.
  std::vector<std::string> list_variables;
  // What one task's own device is written to: the most physical layer, so the device is selected once.
  std::string bind_variable;
  // The layers above it, set to "0" for a bound task: their inherited value indexes the node's list, and would
  // hide or renumber the one device left (HIP honours CUDA_VISIBLE_DEVICES as well as its own).
  std::vector<std::string> renumbered_variables;
  // Whether the runtime numbers a node's devices 0..N-1 when no variable lists them, so a task's local rank names
  // its device (Level Zero: tiles as devices under ZE_FLAT_DEVICE_HIERARCHY=FLAT, cards under COMPOSITE). PBS and
  // PALS give no device list; Slurm's GPU lists are read from the job's face instead.
  bool numbered_by_default = false;
  std::string torch_device;  // what torch calls it: cuda (ROCm builds too), xpu
  // What Apptainer/Singularity's exec needs to give a container the vendor's GPUs ({gpu_flag} in container.wrap);
  // empty: none (Level Zero's devices are plain device files).
  std::string container_gpu_flag;
  // Variable names only this vendor's software reads: a profile of another vendor that sets one is refused.
  std::vector<std::string> own_prefixes;
};

const DeviceVisibility& device_visibility(Accelerator a);

// HPCLAUNCH_ACCELERATOR, which the script exports from the profile; nvidia when unset. Throws Error naming the
// variable on an unknown vendor.
Accelerator accelerator_from_env(const Env& env);

// The node's device list in the vendor's variables, the first one set and not empty; nullopt when none is.
std::optional<std::string> visible_device_list(const Env& env, const DeviceVisibility& v);

// The variables of a process bound to `device` (an entry of the node's list: "3", "GPU-uuid", or Level Zero's
// "1.0"), in the order to set them: the vendor's bind variable, then each renumbered one as "0". The one
// definition of binding, for `hpclaunch exec` and the agent's workers (--virtual-local-rank).
std::vector<std::pair<std::string, std::string>> bound_device_env(const DeviceVisibility& v, const std::string& device);

}  // namespace hpclaunch
