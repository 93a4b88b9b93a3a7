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
  // The one option every remote-capable command shares: taken out of argv before the command runs
  // (cli/remote_cli.cc), here for --help, the man page and completion.
  static std::string remote;
  if (const Command* c = find_command(app.get_name()); c && c->remote && !app.get_option_no_throw("--remote"))
    app.add_option("--remote", remote, "run this command on a login node over ssh: [USER@]HOST[:PORT], or a site "
                                       "whose profile names its login_host; output and exit status come back "
                                       "(docs/remote.md)");
  if (parse_cli(app, args, "hpclaunch " + app.get_name(), "put the command after `--`") == Parsed::flags) return true;
  print_help(app.help());
  return false;
}

}  // namespace hpclaunch
