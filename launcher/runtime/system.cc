// The runtime's effects: file reads and name resolution (POSIX).
#include "runtime/system.h"
#include "util/file.h"

#include <arpa/inet.h>
#include <netdb.h>
#include <sys/socket.h>

#include <cerrno>
#include <cstring>

#include "dialect/dialect.h"  // command_failed: a scheduler command's failure, in the words every one uses
#include "util/command.h"
#include "util/error.h"

namespace hpclaunch {

std::string read_text_file(const std::string& path) {
  auto text = read_file(path);
  if (!text) throw failure(path, std::string("cannot read: ") + std::strerror(errno), "check the path and its permissions");
  return *text;
}

std::string command_output(const std::vector<std::string>& argv) {
  ProcessResult r = run_capture(argv);
  if (r.exit_code != 0) command_failed(argv, r, "run it inside the job, where the scheduler answers");
  return r.out;
}

std::optional<std::string> resolve_ipv4(const std::string& host) {
  addrinfo hints{};
  hints.ai_family = AF_INET;
  hints.ai_socktype = SOCK_STREAM;
  addrinfo* found = nullptr;
  if (getaddrinfo(host.c_str(), nullptr, &hints, &found) != 0 || !found) return std::nullopt;
  char text[INET_ADDRSTRLEN] = {};
  auto* sin = reinterpret_cast<sockaddr_in*>(found->ai_addr);
  const char* ok = inet_ntop(AF_INET, &sin->sin_addr, text, sizeof text);
  freeaddrinfo(found);
  if (!ok) return std::nullopt;
  return std::string(text);
}

}  // namespace hpclaunch
