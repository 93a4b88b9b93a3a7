// Man pages in roff: hpclaunch(1) from the command table, hpclaunch-CMD(1) from a command's --help text.
#pragma once
#include <string>
#include <vector>

#include "cli/help_model.h"

namespace hpclaunch {

// hpclaunch(1): what it is, the commands (each pointing to its own page), exit status, files, environment.
std::string main_man_page(const std::vector<CommandDoc>& commands, const std::string& version);

// hpclaunch-NAME(1) from the command's summary and its parsed --help.
std::string command_man_page(const CommandDoc& command, const std::string& version);

// `s` with roff's special characters escaped (backslash, a leading dot or quote, hyphens as \-).
std::string roff_escape(const std::string& s);

}  // namespace hpclaunch
