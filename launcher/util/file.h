// Reading a whole file: the one place that does it; callers decide what a missing file means.
#pragma once
#include <optional>
#include <string>

namespace hpclaunch {

// The file's bytes, or nullopt when it cannot be opened (errno says why).
std::optional<std::string> read_file(const std::string& path);

}  // namespace hpclaunch
