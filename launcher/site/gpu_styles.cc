#include "site/gpu_styles.h"

#include "site/open_enum.h"

namespace hpclaunch {

namespace {

OpenEnum<GpuStyle, GpuType>& known_gpu_styles() {
  static OpenEnum<GpuStyle, GpuType> known("register_gpu_style", {
#define HPCLAUNCH_GPU_STYLE(id, name, type) {name, GpuType::type},
#include "site/gpu_styles.def"
#include "hpclaunch_folder_gpu_styles.def"  // a scheduler folder's own (launcher/schedulers/NAME/gpu_styles.def)
#undef HPCLAUNCH_GPU_STYLE
  });
  return known;
}

}  // namespace

const char* to_string(GpuStyle s) { return known_gpu_styles().name(s); }
std::optional<GpuStyle> gpu_style_named(std::string_view name) { return known_gpu_styles().named(name); }
EnumNames<GpuStyle> gpu_style_names() { return known_gpu_styles().names(); }
GpuType gpu_style_type(GpuStyle s) { return known_gpu_styles().facts(s, GpuType::untyped); }

GpuStyle register_gpu_style(const std::string& name, GpuType type) { return known_gpu_styles().add(name, type); }

}  // namespace hpclaunch
