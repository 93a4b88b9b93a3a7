// The registry of GPU request styles (how a job asks for GPUs), by name and id: the built-in ones of
// site/gpu_styles.def (gpus-per-node, gres, pbs-select, pbs-totals, none), then any a program registers at run time
// (register_gpu_style; a test's toy style). A profile's gpu_request.style spells them by name. This layer knows a
// style's name and whether it names a GPU type; which schedulers write it is their dialects' (dialect/dialect.h's
// `gpu_styles`, checked when a profile is read), and the directives they write for it.
#pragma once
#include <optional>
#include <string>
#include <string_view>

#include "util/enum_names.h"

namespace hpclaunch {

// A GPU style's id: the built-in ones by name (GpuStyle::gres); a registered one past them.
enum class GpuStyle : int {
#define HPCLAUNCH_GPU_STYLE(id, name, type) id,
#include "site/gpu_styles.def"
#include "hpclaunch_folder_gpu_styles.def"  // a scheduler folder's own (launcher/schedulers/NAME/gpu_styles.def)
#undef HPCLAUNCH_GPU_STYLE
};

// Whether a style's request names the GPU type (gpu_request.type).
enum class GpuType { typed, untyped };

// Its name ("?" for an id never given).
const char* to_string(GpuStyle s);
std::optional<GpuStyle> gpu_style_named(std::string_view name);
// Every known style's name and id, in id order (the choices of a profile's gpu_request.style).
EnumNames<GpuStyle> gpu_style_names();
GpuType gpu_style_type(GpuStyle s);
// A new style, past the built-in ones. Throws Error when the name is taken or empty.
GpuStyle register_gpu_style(const std::string& name, GpuType type);

}  // namespace hpclaunch
