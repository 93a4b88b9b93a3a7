// The agent's own messages on stderr, one whole line each: "hpclaunch agent[n1]: ...".
#pragma once
#include <fmt/core.h>
#include <unistd.h>

#include <string>

namespace hpclaunch {

inline void agent_log(const std::string& host, const std::string& msg) {
  std::string line = fmt::format("hpclaunch agent[{}]: {}\n", host, msg);
  ssize_t ignored = ::write(2, line.data(), line.size());
  (void)ignored;
}

}  // namespace hpclaunch
