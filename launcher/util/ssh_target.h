// An ssh destination as a user gives one, [USER@]HOST[:PORT], checked so that ssh cannot read it as an option.
#pragma once
#include <optional>
#include <string>
#include <string_view>

namespace hpclaunch {

// [USER@]HOST[:PORT] (`--remote`, a profile's login_host).
struct SshTarget {
  std::string user;  // "" : ssh's own choice (the config's User, else the local name)
  std::string host;
  int port = 0;      // 0: ssh's own choice
};

// The target `text` names, or nullopt with `why` set. HOST is a name, an IPv4 address or a bracketed IPv6 one
// ([::1]:2222); nothing in either part may start with '-' (ssh would read an option) or hold a space or a quote.
std::optional<SshTarget> parse_ssh_target(std::string_view text, std::string* why);
// "USER@HOST" or "HOST": ssh's destination argument.
std::string ssh_destination(const SshTarget& t);

}  // namespace hpclaunch
