// Quoting for POSIX shells: what makes a rendered script hand every user string to the program byte-exact.
#pragma once
#include <string>
#include <string_view>
#include <vector>

namespace hpclaunch {

// A single shell word that expands to exactly `s`: spaces, quotes, $, backticks, ;, newlines, globs, "".
std::string shell_quote(std::string_view s);
// Each argument quoted, joined by spaces.
std::string shell_join(const std::vector<std::string>& argv);
// True if `name` is a valid shell variable name ([A-Za-z_][A-Za-z0-9_]*).
bool is_env_name(std::string_view name);

}  // namespace hpclaunch
