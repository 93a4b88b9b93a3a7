// `hpclaunch man [COMMAND] [--output-dir DIR]`: the man pages in roff, made from the command table and each
// command's --help (cli/man_page.h); the build writes them with --output-dir and `cmake --install` installs them.
#include <fmt/core.h>

#include <filesystem>

#include "cli/cli_util.h"
#include "cli/help_text.h"
#include "cli/man_page.h"
#include "util/error.h"
#include "util/file.h"
#include "util/strings.h"

namespace hpclaunch {

int cmd_man(const Args& args) {
  CLI::App app("Print hpclaunch's man page, or a command's (hpclaunch-COMMAND(1)), in roff.", "man");
  std::string name, dir;
  app.add_option("COMMAND", name, "the command whose page to print; none: hpclaunch(1)");
  app.add_option("--output-dir", dir, "write hpclaunch.1 and every hpclaunch-COMMAND.1 into DIR instead");
  if (!parse_or_throw(app, args)) return 0;
  std::vector<CommandDoc> docs = command_docs();
  std::vector<std::pair<std::string, std::string>> pages;  // file name, roff
  if (name.empty() || !dir.empty()) pages.emplace_back("hpclaunch.1", main_man_page(docs, HPCLAUNCH_VERSION));
  std::vector<std::string> names;
  for (const auto& d : docs) {
    names.push_back(d.name);
    if (d.name == name || (!dir.empty() && name.empty()))
      pages.emplace_back("hpclaunch-" + d.name + ".1", command_man_page(d, HPCLAUNCH_VERSION));
  }
  if (!name.empty() && pages.size() == (dir.empty() ? 0u : 1u))
    throw Error("man", "unknown command '" + name + "'" + did_you_mean(name, names), "run `hpclaunch --help` for the list");
  if (dir.empty()) {
    fmt::print("{}", pages.front().second);
    return 0;
  }
  std::error_code ec;
  std::filesystem::create_directories(dir, ec);
  for (const auto& [file, roff] : pages) {
    std::string path = (std::filesystem::path(dir) / file).string();
    if (!write_file_atomic(path, roff)) throw failure(path, "cannot write the man page", "check the directory and its permissions");
    fmt::print("{}\n", path);
  }
  return 0;
}

}  // namespace hpclaunch
