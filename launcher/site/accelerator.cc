#include "site/accelerator.h"

#include "util/error.h"
#include "util/strings.h"

namespace hpclaunch {

namespace {

const DeviceVisibility k_nvidia{Accelerator::nvidia, {"CUDA_VISIBLE_DEVICES"}, "CUDA_VISIBLE_DEVICES", {}, false, "cuda", "--nv", {"CUDA_", "NVIDIA_"}};
const DeviceVisibility k_amd{Accelerator::amd,
                             {"ROCR_VISIBLE_DEVICES", "HIP_VISIBLE_DEVICES", "CUDA_VISIBLE_DEVICES"},
                             "ROCR_VISIBLE_DEVICES",
                             {"HIP_VISIBLE_DEVICES", "CUDA_VISIBLE_DEVICES"},
                             false,
                             "cuda",
                             "--rocm",
                             {"ROCR_", "HIP_", "HSA_", "MIOPEN_", "ROCM_"}};
const DeviceVisibility k_intel{Accelerator::intel, {"ZE_AFFINITY_MASK"}, "ZE_AFFINITY_MASK", {}, true, "xpu", "", {"ZE_", "SYCL_", "CCL_"}};

}  // namespace

const DeviceVisibility& device_visibility(Accelerator a) {
  switch (a) {
    case Accelerator::amd: return k_amd;
    case Accelerator::intel: return k_intel;
    case Accelerator::nvidia: break;
  }
  return k_nvidia;
}

Accelerator accelerator_from_env(const Env& env) {
  auto v = env_get(env, "HPCLAUNCH_ACCELERATOR");
  if (!v || v->empty()) return Accelerator::nvidia;
  if (auto a = value_of(k_accelerator_names, *v)) return *a;
  throw Error("HPCLAUNCH_ACCELERATOR",
              "unknown accelerator '" + *v + "'" + did_you_mean(*v, names_of(k_accelerator_names)),
              "use nvidia, amd or intel (the profile's node.accelerator)");
}

std::optional<std::string> visible_device_list(const Env& env, const DeviceVisibility& v) {
  for (const auto& name : v.list_variables)
    if (auto s = env_get(env, name); s && !s->empty()) return *s;
  return std::nullopt;
}

std::vector<std::pair<std::string, std::string>> bound_device_env(const DeviceVisibility& v, const std::string& device) {
  std::vector<std::pair<std::string, std::string>> out = {{v.bind_variable, device}};
  for (const auto& name : v.renumbered_variables) out.emplace_back(name, "0");
  return out;
}

}  // namespace hpclaunch
