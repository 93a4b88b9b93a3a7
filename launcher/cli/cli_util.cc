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

bool parse_or_throw(CLI::App& app, Args args) {
  std::reverse(args.begin(), args.end());  // CLI11 takes a reversed vector
  try {
    app.parse(args);
  } catch (const CLI::CallForHelp&) {
    print_help(app.help());
    return false;
  } catch (const CLI::ParseError& e) {
    throw cli_error(e, app, "hpclaunch " + app.get_name(), "put the command after `--`");
  }
  return true;
}

}  // namespace hpclaunch
