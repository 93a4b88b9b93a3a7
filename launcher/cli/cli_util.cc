#include "cli/cli_util.h"

#include <algorithm>

#include "util/error.h"

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
    std::cout << app.help();
    return false;
  } catch (const CLI::ParseError& e) {
    throw Error(app.get_name(), e.what(), "see `hpclaunch " + app.get_name() + " --help`");
  }
  return true;
}

}  // namespace hpclaunch
