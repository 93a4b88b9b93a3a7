#include "cli/cli_util.h"

#include <algorithm>
#include <regex>

#include "cli/help_text.h"
#include "util/error.h"
#include "util/strings.h"

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
  } catch (const CLI::ConversionError& e) {
    // CLI11 says "Could not convert: --nodes = two"; name the flag first, as every other error does.
    static const std::regex k_conv("Could not convert: (\\S+) = (.*)");
    std::smatch m;
    std::string what = e.what();
    if (std::regex_match(what, m, k_conv))
      throw Error(m[1].str(), "'" + m[2].str() + "' is not a valid value", "see `hpclaunch " + app.get_name() + " --help`");
    throw Error(app.get_name(), what, "see `hpclaunch " + app.get_name() + " --help`");
  } catch (const CLI::ExtrasError& e) {
    std::vector<std::string> flags;
    for (const CLI::Option* o : app.get_options())
      for (const auto& n : o->get_lnames()) flags.push_back("--" + n);
    // "The following arguments were not expected: m1_g --acount" (CLI11 lists them last first).
    std::string what = e.what();
    size_t colon = what.find(": ");
    std::string first = colon == std::string::npos ? std::string() : split(what.substr(colon + 2), ' ').back();
    if (!first.empty() && first[0] == '-')
      throw Error(first, "unknown option" + did_you_mean(first, flags), "see `hpclaunch " + app.get_name() + " --help`");
    throw Error(app.get_name(), std::string("unexpected argument") + (first.empty() ? "" : " '" + first + "'"),
                "put the command after `--`; see `hpclaunch " + app.get_name() + " --help`");
  } catch (const CLI::ParseError& e) {
    throw Error(app.get_name(), e.what(), "see `hpclaunch " + app.get_name() + " --help`");
  }
  return true;
}

}  // namespace hpclaunch
