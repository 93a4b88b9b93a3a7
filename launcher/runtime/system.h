// The runtime's effects on this machine: reading the node file and resolving host names. Kept apart so the
// rank and rendezvous logic stays pure (tests inject tables instead).
#pragma once
#include <optional>
#include <string>

namespace hpclaunch {

// The whole file; throws hpclaunch::Error naming the path if it cannot be read.
std::string read_text_file(const std::string& path);
// The first IPv4 address of `host` (getaddrinfo, AF_INET), nullopt if it does not resolve.
std::optional<std::string> resolve_ipv4(const std::string& host);

}  // namespace hpclaunch
