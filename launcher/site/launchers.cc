#include "site/launchers.h"

#include "site/open_enum.h"

namespace hpclaunch {

namespace {

OpenEnum<LaunchMode, LaunchTasks>& known_launchers() {
  static OpenEnum<LaunchMode, LaunchTasks> known("register_launcher", {
#define HPCLAUNCH_LAUNCHER(id, name, tasks) {name, LaunchTasks::tasks},
#include "site/launchers.def"
#include "hpclaunch_folder_launchers.def"  // a scheduler folder's own (launcher/schedulers/NAME/launchers.def)
#undef HPCLAUNCH_LAUNCHER
  });
  return known;
}

}  // namespace

const char* to_string(LaunchMode m) { return known_launchers().name(m); }
std::optional<LaunchMode> launch_mode_named(std::string_view name) { return known_launchers().named(name); }
EnumNames<LaunchMode> launch_mode_names() { return known_launchers().names(); }
LaunchTasks launch_tasks(LaunchMode m) { return known_launchers().facts(m, LaunchTasks::per_worker); }

LaunchMode register_launcher(const std::string& name, LaunchTasks tasks) { return known_launchers().add(name, tasks); }

}  // namespace hpclaunch
