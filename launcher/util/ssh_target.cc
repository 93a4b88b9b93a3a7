#include "util/ssh_target.h"

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

}  // namespace hpclaunch
