// Helpers every subcommand uses: splitting argv at `--`, and running a CLI11 parser so that its complaints
// become one-line hpclaunch::Errors (util/cli_error.h).
#pragma once
#include <CLI/CLI.hpp>
#include <string>
#include <vector>

#include "cli/commands.h"

namespace hpclaunch {

struct SplitArgs {
  Args options;              // before the first `--`
  Args command;              // after it
  bool has_separator = false;
};
SplitArgs split_at_separator(const Args& args);

// Parses `args` with `app`. Returns false when --help was printed (the command should exit 0).
bool parse_or_throw(CLI::App& app, const Args& args);

}  // namespace hpclaunch
