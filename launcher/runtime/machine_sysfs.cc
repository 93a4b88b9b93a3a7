// The machine's side of SysfsView (runtime/node_devices.h): its files and folders, read as they are.
#include <filesystem>

#include "runtime/node_devices.h"
#include "util/file.h"

namespace hpclaunch {

namespace {

class MachineSysfs final : public SysfsView {
 public:
  std::optional<std::string> read(const std::string& path) const override { return read_file(path); }
  std::vector<std::string> list(const std::string& dir) const override {
    std::vector<std::string> names;
    std::error_code ec;
    for (const auto& e : std::filesystem::directory_iterator(dir, ec)) names.push_back(e.path().filename().string());
    return names;
  }
};

}  // namespace

const SysfsView& machine_sysfs() {
  static const MachineSysfs sysfs;
  return sysfs;
}

}  // namespace hpclaunch
