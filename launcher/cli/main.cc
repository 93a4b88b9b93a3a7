// Entry point: picks the subcommand; an hpclaunch::Error is printed once, by run_main (util/cli_error.h).
#include <fmt/core.h>

#include <cstdio>

#include "cli/commands.h"
#include "cli/json_output.h"
#include "cli/remote_cli.h"
#include "cli/version.h"
#include "util/cli_error.h"
#include "util/error.h"
#include "util/strings.h"

using namespace hpclaunch;

namespace {

void usage(std::FILE* out) {
  fmt::print(out, "usage: hpclaunch COMMAND [OPTIONS] [-- CMD ARG...]\n\ncommands:\n");
  for (const auto& c : commands()) fmt::print(out, "  {:<10} {}\n", c.name, c.summary);
  fmt::print(out, "\n`hpclaunch COMMAND --help` describes a command's options.\n");
}

std::string version_line() { return fmt::format("hpclaunch {} (commit {})", HPCLAUNCH_VERSION, build_commit()); }

int dispatch(int argc, char** argv) {
  // Run as `torchrun` (a link named so, first on PATH): torchrun's command line, unchanged job scripts.
  std::string self = argc > 0 ? argv[0] : "";
  if (self.substr(self.rfind('/') + 1) == "torchrun") return cmd_torchrun(Args(argv + 1, argv + argc));
  if (argc < 2) {
    usage(stderr);
    return k_exit_bad_input;
  }
  std::string name = argv[1];
  if (name == "-h" || name == "--help" || name == "help") {
    usage(stdout);
    return 0;
  }
  if (name == "--version") {
    const bool json = argc == 3 && std::string(argv[2]) == "--json";
    if (argc > 2 && !json)
      throw Error(argv[2], "--version takes no argument but --json", "run `hpclaunch --version [--json]`");
    if (json) fmt::print("{}\n", version_json(HPCLAUNCH_VERSION, build_commit()).dump());
    else fmt::print("{}\n", version_line());
    return 0;
  }
  Args args(argv + 2, argv + argc);
  std::vector<std::string> names;
  for (const auto& c : commands()) {
    if (name != c.name) {
      names.push_back(c.name);
      continue;
    }
    if (std::optional<int> far = run_if_remote(c, args, version_line())) return *far;
    return c.run(args);
  }
  throw Error("", "unknown command '" + name + "'" + did_you_mean(name, names),
              "run `hpclaunch --help` for the list");
}

}  // namespace

int main(int argc, char** argv) {
  return run_main("hpclaunch", [&] { return dispatch(argc, argv); });
}
