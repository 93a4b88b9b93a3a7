#include "cli/help_text.h"

#include <fmt/core.h>

namespace hpclaunch {

namespace {

std::string* g_help_sink = nullptr;

}  // namespace

void print_help(const std::string& text) {
  if (g_help_sink)
    *g_help_sink += text;
  else
    fmt::print("{}", text);
}

std::string command_help(const Command& c) {
  // `check` execs hpclaunch-probe with its arguments (--help included), which is built with the trainer: its
  // page points there instead of running it.
  if (c.run == &cmd_check)
    return std::string(c.summary) +
           "\nUsage: check [PROBE OPTIONS]\n\n"
           "hpclaunch check execs hpclaunch-probe (installed beside hpclaunch when it is built with LibTorch, or "
           "$HPCLAUNCH_PROBE) with its arguments; `hpclaunch check --help` prints the probe's options.\n";
  std::string text;
  g_help_sink = &text;
  try {
    c.run({"--help"});
  } catch (...) {
    g_help_sink = nullptr;
    throw;
  }
  g_help_sink = nullptr;
  return text;
}

std::vector<CommandDoc> command_docs() {
  std::vector<CommandDoc> out;
  for (const auto& c : commands()) out.push_back({c.name, c.summary, parse_help(command_help(c))});
  return out;
}

}  // namespace hpclaunch
