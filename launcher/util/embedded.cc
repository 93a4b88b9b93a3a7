#include "util/embedded.h"

namespace hpclaunch {

std::optional<std::string_view> find_embedded(std::string_view path) {
  for (const auto& f : embedded_files())
    if (f.path == path) return f.data;
  return std::nullopt;
}

}  // namespace hpclaunch
