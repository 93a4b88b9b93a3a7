// The runtime's effects on this machine: reading the node file, running the command that lists a job's nodes where a
// scheduler names them so, and resolving host names. Kept apart so the
// rank and rendezvous logic stays pure (tests inject tables instead).
#pragma once
#include <optional>
#include <string>
#include <vector>

namespace hpclaunch {

// The whole file; throws hpclaunch::Error naming the path if it cannot be read.
std::string read_text_file(const std::string& path);
// What `argv` prints (a face's node_list_command); throws hpclaunch::Error naming it when it cannot be run or fails.
std::string command_output(const std::vector<std::string>& argv);
// The first IPv4 address of `host` (getaddrinfo, AF_INET), nullopt if it does not resolve.
std::optional<std::string> resolve_ipv4(const std::string& host);

}  // namespace hpclaunch
