#include "cli/cli_util.h"

#include <algorithm>

#include "cli/help_text.h"
#include "util/cli_error.h"

namespace hpclaunch {

SplitArgs split_at_separator(const Args& args) {
  SplitArgs s;
  auto sep = std::find(args.begin(), args.end(), "--");
  s.options.assign(args.begin(), sep);
  if (sep != args.end()) {
    s.has_separator = true;
    s.command.assign(sep + 1, args.end());
  }
  return s;
}

bool parse_or_throw(CLI::App& app, const Args& args) {
  if (parse_cli(app, args, "hpclaunch " + app.get_name(), "put the command after `--`") == Parsed::flags) return true;
  print_help(app.help());
  return false;
}

}  // namespace hpclaunch
