// Atomic file replacement: see atomic_file.h.
#include "atomic_file.h"

#include <dirent.h>
#include <fcntl.h>
#include <unistd.h>

#include <cerrno>
#include <cstdlib>
#include <cstring>

#include "util/error.h"
#include "util/file.h"

namespace hpctrain {
namespace {

std::string dir_of(const std::string& path) {
  const auto slash = path.rfind('/');
  return slash == std::string::npos ? "." : slash == 0 ? "/" : path.substr(0, slash);
}

std::string base_of(const std::string& path) {
  const auto slash = path.rfind('/');
  return slash == std::string::npos ? path : path.substr(slash + 1);
}

// `path`'s write failed at `step` (e.g. "writing its temporary file .latest.pt.tmp.42"): one line naming the
// target and the role's fix.
[[noreturn]] void fail(const std::string& path, const FileRole& role, const std::string& step, int err) {
  throw hpclaunch::failure(path, "cannot write " + role.what + " (" + step + ": " + std::strerror(err) + ")", role.fix);
}

}  // namespace

std::string temporary_path_for(const std::string& path) {
  return dir_of(path) + "/." + base_of(path) + ".tmp." + std::to_string(::getpid());
}

void write_file_atomically(const std::string& path, const std::vector<char>& bytes, const FileRole& role) {
  const std::string tmp = temporary_path_for(path);
  const std::string tmp_name = "its temporary file " + base_of(tmp);
  const int fd = ::open(tmp.c_str(), O_WRONLY | O_CREAT | O_TRUNC | O_CLOEXEC, 0644);
  if (fd < 0) fail(path, role, "creating " + tmp_name, errno);
  const char* fault = std::getenv("HPCLAUNCH_TRAIN_FAULT");
  if (fault != nullptr && std::strcmp(fault, "partial-save") == 0) {
    hpclaunch::write_all(fd, std::string_view(bytes.data(), bytes.size() / 2));
    ::_exit(k_exit_fault_injected);
  }
  if (!hpclaunch::write_all(fd, std::string_view(bytes.data(), bytes.size())) || ::fsync(fd) != 0) {
    const int err = errno;
    ::close(fd);
    ::unlink(tmp.c_str());
    fail(path, role, "writing " + tmp_name, err);
  }
  if (::close(fd) != 0) {
    const int err = errno;
    ::unlink(tmp.c_str());
    fail(path, role, "closing " + tmp_name, err);
  }
  if (::rename(tmp.c_str(), path.c_str()) != 0) {
    const int err = errno;
    ::unlink(tmp.c_str());
    fail(path, role, "renaming " + tmp_name + " over it", err);
  }
  // The rename is durable only once the folder is synced.
  const int dir = ::open(dir_of(path).c_str(), O_RDONLY | O_DIRECTORY | O_CLOEXEC);
  if (dir >= 0) {
    ::fsync(dir);
    ::close(dir);
  }
}

int remove_stale_temporaries(const std::string& path) {
  const std::string prefix = "." + base_of(path) + ".tmp.";
  DIR* dir = ::opendir(dir_of(path).c_str());
  if (dir == nullptr) return 0;
  int removed = 0;
  while (const dirent* entry = ::readdir(dir)) {
    if (std::strncmp(entry->d_name, prefix.c_str(), prefix.size()) == 0 &&
        ::unlink((dir_of(path) + "/" + entry->d_name).c_str()) == 0)
      ++removed;
  }
  ::closedir(dir);
  return removed;
}

}  // namespace hpctrain
