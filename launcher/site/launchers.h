// The registry of launchers (launch modes), by name and id: the built-in ones of site/launchers.def (agent, srun,
// mpirun, pals), then those of the scheduler folders (launcher/schedulers/NAME/launchers.def, in folder order),
// then any a program registers at run time (register_launcher; a test's toy launcher). Profiles,
// plan.json and job.json spell them by name. This layer knows a launcher's name and how many tasks a node runs for
// it; which schedulers start it is their dialects' (dialect/dialect.h), and what the script runs for it their
// templates' (render sets a section named after the launcher).
#pragma once
#include <optional>
#include <string>
#include <string_view>

#include "util/enum_names.h"

namespace hpclaunch {

// A launcher's id: the built-in ones by name (LaunchMode::srun); a registered one past them.
enum class LaunchMode : int {
#define HPCLAUNCH_LAUNCHER(id, name, tasks) id,
#include "site/launchers.def"
#include "hpclaunch_folder_launchers.def"  // a scheduler folder's own (launcher/schedulers/NAME/launchers.def)
#undef HPCLAUNCH_LAUNCHER
};

// The scheduler tasks a launch has on each node: one that starts the node's workers itself (the agent), or one per
// worker, each a rank (srun, mpirun, pals).
enum class LaunchTasks { per_node, per_worker };

// Its name ("?" for an id never given).
const char* to_string(LaunchMode m);
std::optional<LaunchMode> launch_mode_named(std::string_view name);
// Every known launcher's name and id, in id order (the choices of a profile's launch.allowed and of --launcher).
EnumNames<LaunchMode> launch_mode_names();
LaunchTasks launch_tasks(LaunchMode m);
// A new launcher, past the built-in ones; its name is also the template's section for it ({{#NAME}}). Throws Error
// when the name is taken or empty.
LaunchMode register_launcher(const std::string& name, LaunchTasks tasks);

}  // namespace hpclaunch
