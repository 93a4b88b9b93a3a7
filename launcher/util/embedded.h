// Files compiled into the binary: the built-in site profiles and the script templates.
#pragma once
#include <optional>
#include <string_view>
#include <vector>

namespace hpclaunch {

struct EmbeddedFile {
  std::string_view path;  // relative to the source tree, e.g. "site-profiles/perlmutter.yaml"
  std::string_view data;
};

const std::vector<EmbeddedFile>& embedded_files();

// The file at `path`, or nullopt.
std::optional<std::string_view> find_embedded(std::string_view path);

}  // namespace hpclaunch
