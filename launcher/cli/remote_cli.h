// `--remote` (docs/remote.md): a remote-capable command (Command::remote) given --remote runs on a login node over
// ssh, its output and exit status coming back; the rest of its command line is the far command's.
#pragma once
#include <optional>
#include <string>

#include "cli/commands.h"

namespace hpclaunch {

// Runs `c` with `args` on the far side when they hold --remote (before any `--`), returning its exit status;
// nullopt when they do not (the command runs here). `version_line` is `hpclaunch --version`'s: the far launcher
// must print the same, or this one's static build for the far architecture is copied there first.
std::optional<int> run_if_remote(const Command& c, const Args& args, const std::string& version_line);

}  // namespace hpclaunch
