#include "util/file.h"

#include <fstream>
#include <sstream>

namespace hpclaunch {

std::optional<std::string> read_file(const std::string& path) {
  std::ifstream in(path, std::ios::binary);
  if (!in) return std::nullopt;
  std::ostringstream text;
  text << in.rdbuf();
  return text.str();
}

}  // namespace hpclaunch
