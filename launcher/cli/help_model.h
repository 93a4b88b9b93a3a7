// A subcommand's --help text (CLI11's layout) read back into its parts, so that the man pages and the shell
// completion are made from the same text `hpclaunch CMD --help` prints.
#pragma once
#include <string>
#include <vector>

namespace hpclaunch {

struct HelpEntry {
  std::vector<std::string> names;  // "-o", "--output"; a positional's one name ("JOB")
  std::string value;               // "TEXT", "INT=1", "INT:INT in [1 - 1024]", ...; empty for a flag
  bool repeatable = false;         // CLI11's "..." (a vector option, or several positionals)
  std::string text;                // the description, continuation lines joined with a space
  bool positional = false;
};

struct HelpModel {
  std::string description;           // the lines before "Usage:"
  std::string usage;                 // what follows "Usage: NAME"
  std::vector<HelpEntry> entries;    // positionals and options, in the order printed
  std::string notes;                 // any paragraph after the option lists
};

// A command of the table with its parsed --help: what man pages and completion scripts are made from.
struct CommandDoc {
  std::string name;
  std::string summary;
  HelpModel help;
};

HelpModel parse_help(const std::string& text);

// The entry that has `name` ("--site", "JOB"), or nullptr.
const HelpEntry* find_entry(const HelpModel& help, const std::string& name);

}  // namespace hpclaunch
