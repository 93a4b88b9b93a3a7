#include "submit/job_index.h"

#include <fcntl.h>
#include <unistd.h>

#include <cerrno>
#include <cstdlib>
#include <cstring>
#include <filesystem>
#include <fstream>

namespace hpclaunch {

namespace fs = std::filesystem;

std::string job_index_path() {
  const char* state = std::getenv("XDG_STATE_HOME");
  fs::path base = state && *state ? fs::path(state) : fs::path(std::getenv("HOME") ? std::getenv("HOME") : "/tmp") / ".local" / "state";
  return (base / "hpclaunch" / "jobs").string();
}

bool add_to_job_index(const std::string& job_dir, std::string* err) {
  fs::path path = job_index_path();
  std::error_code ec;
  fs::create_directories(path.parent_path(), ec);
  int fd = ::open(path.c_str(), O_WRONLY | O_CREAT | O_APPEND | O_CLOEXEC, 0644);
  if (fd < 0) {
    *err = path.string() + ": " + std::strerror(errno);
    return false;
  }
  std::string line = job_dir + "\n";
  bool ok = ::write(fd, line.data(), line.size()) == static_cast<ssize_t>(line.size());
  if (!ok) *err = path.string() + ": " + std::strerror(errno);
  ::close(fd);
  return ok;
}

std::vector<std::string> read_job_index() {
  std::vector<std::string> out;
  std::ifstream in(job_index_path());
  for (std::string line; std::getline(in, line);)
    if (!line.empty()) out.push_back(line);
  return out;
}

}  // namespace hpclaunch
