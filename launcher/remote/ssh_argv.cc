#include "remote/ssh_argv.h"

#include <fmt/core.h>

namespace hpclaunch {

namespace {

bool name_char(char c) {
  return (c >= 'a' && c <= 'z') || (c >= 'A' && c <= 'Z') || (c >= '0' && c <= '9') || c == '.' || c == '-' ||
         c == '_';
}

// Why `part` (the user or the host) cannot be what it says it is; "" when it can.
std::string bad_part(std::string_view part, const char* what, bool colons) {
  if (part.empty()) return fmt::format("the {} is empty", what);
  if (part[0] == '-') return fmt::format("the {} '{}' starts with '-' (ssh would read an option)", what, part);
  for (char c : part)
    if (!name_char(c) && !(colons && c == ':'))
      return fmt::format("the {} '{}' holds '{}'", what, part, c);
  return "";
}

std::optional<int> port_of(std::string_view digits) {
  if (digits.empty() || digits.size() > 5) return std::nullopt;
  int port = 0;
  for (char c : digits) {
    if (c < '0' || c > '9') return std::nullopt;
    port = port * 10 + (c - '0');
  }
  if (port < 1 || port > 65535) return std::nullopt;
  return port;
}

std::vector<std::string> common_options(const SshSettings& s, const SshTarget& t) {
  std::vector<std::string> argv = {"ssh"};
  if (!s.config_file.empty()) argv.insert(argv.end(), {"-F", s.config_file});
  argv.insert(argv.end(), {"-o", "ControlMaster=auto", "-o", "ControlPath=" + s.control_dir + "/%C", "-o",
                           fmt::format("ControlPersist={}", s.persist_s),
                           // A connection that went away is noticed within a minute, not at TCP's timeout.
                           "-o", "ServerAliveInterval=15", "-o", "ServerAliveCountMax=4"});
  if (s.batch) argv.insert(argv.end(), {"-o", "BatchMode=yes"});
  if (t.port) argv.insert(argv.end(), {"-p", std::to_string(t.port)});
  return argv;
}

}  // namespace

std::optional<SshTarget> parse_ssh_target(std::string_view text, std::string* why) {
  SshTarget t;
  std::string_view rest = text;
  if (size_t at = rest.rfind('@'); at != std::string_view::npos) {
    t.user = std::string(rest.substr(0, at));
    rest = rest.substr(at + 1);
    if (*why = bad_part(t.user, "user", false); !why->empty()) return std::nullopt;
  }
  std::string_view port;
  if (!rest.empty() && rest[0] == '[') {  // [IPv6]:PORT
    size_t close = rest.find(']');
    if (close == std::string_view::npos) return *why = "'[' without ']' around an IPv6 address", std::nullopt;
    std::string_view after = rest.substr(close + 1);
    if (!after.empty() && after[0] != ':')
      return *why = fmt::format("'{}' after the address's ']'", after), std::nullopt;
    if (!after.empty()) port = after.substr(1);
    if (*why = bad_part(rest.substr(1, close - 1), "address", true); !why->empty()) return std::nullopt;
    t.host = std::string(rest.substr(1, close - 1));
  } else {
    size_t colon = rest.find(':');
    t.host = std::string(rest.substr(0, colon));
    if (colon != std::string_view::npos) port = rest.substr(colon + 1);
    if (colon != std::string_view::npos && port.empty())
      return *why = "nothing after ':' (a port: HOST:2222)", std::nullopt;
    if (*why = bad_part(t.host, "host", false); !why->empty()) return std::nullopt;
  }
  if (!port.empty() || (!rest.empty() && rest.back() == ':')) {
    std::optional<int> p = port_of(port);
    if (!p) return *why = fmt::format("the port '{}' is not a number from 1 to 65535", port), std::nullopt;
    t.port = *p;
  }
  why->clear();
  return t;
}

std::string ssh_destination(const SshTarget& t) { return t.user.empty() ? t.host : t.user + "@" + t.host; }

std::string ssh_control_dir(const std::string& runtime_dir, const std::string& tmp_dir, unsigned uid) {
  // sockaddr_un's sun_path: 108 bytes with the terminating NUL; "/" + %C (40) + ssh's ".XXXXXXXXXXXXXXXX" (17).
  constexpr size_t k_room = 107 - 58;
  const std::string in_runtime = runtime_dir + "/hpclaunch-ssh";
  if (!runtime_dir.empty() && runtime_dir[0] == '/' && in_runtime.size() <= k_room) return in_runtime;
  const std::string tmp = tmp_dir.empty() || tmp_dir[0] != '/' ? "/tmp" : tmp_dir;
  const std::string in_tmp = fmt::format("{}/hpclaunch-ssh-{}", tmp, uid);
  return in_tmp.size() <= k_room ? in_tmp : fmt::format("/tmp/hpclaunch-ssh-{}", uid);
}

std::vector<std::string> ssh_argv(const SshSettings& s, const SshTarget& t, const std::string& far_command) {
  std::vector<std::string> argv = common_options(s, t);
  argv.insert(argv.end(), {"--", ssh_destination(t), far_command});
  return argv;
}

std::vector<std::string> ssh_exit_argv(const SshSettings& s, const SshTarget& t) {
  std::vector<std::string> argv = common_options(s, t);
  argv.insert(argv.end(), {"-O", "exit", "--", ssh_destination(t)});
  return argv;
}

}  // namespace hpclaunch
