#include "util/file.h"

#include <fcntl.h>
#include <sys/file.h>
#include <sys/stat.h>
#include <unistd.h>

#include <algorithm>
#include <cerrno>
#include <cstring>

#include <filesystem>
#include <fstream>

namespace hpclaunch {

// One read of the size fstat gives (and one more that sees the end): through a stream the bytes were copied three
// times, a fifth of reading a 1,000-task array's metrics files (bench/report/RESULTS.md). A file that says no size
// (/proc) is read in growing steps. A read that fails ends the text there, as the stream did.
std::optional<std::string> read_file(const std::string& path) {
  const int fd = ::open(path.c_str(), O_RDONLY | O_CLOEXEC);
  if (fd < 0) return std::nullopt;
  struct stat st {};
  const size_t hint = ::fstat(fd, &st) == 0 && st.st_size > 0 ? static_cast<size_t>(st.st_size) : 0;
  std::string text(std::max<size_t>(hint + 1, 4096), '\0');
  size_t used = 0;
  for (;;) {
    if (used == text.size()) text.resize(2 * text.size());
    const ssize_t n = ::read(fd, text.data() + used, text.size() - used);
    if (n < 0 && errno == EINTR) continue;
    if (n <= 0) break;
    used += static_cast<size_t>(n);
  }
  ::close(fd);
  text.resize(used);
  return text;
}

FileLock::FileLock(const std::string& path) {
  m_fd = ::open(path.c_str(), O_RDWR | O_CREAT | O_CLOEXEC, 0600);
  if (m_fd < 0) {
    m_err = path + ": " + std::strerror(errno);
    return;
  }
  while (::flock(m_fd, LOCK_EX) != 0)
    if (errno != EINTR) {
      m_err = path + ": cannot lock: " + std::strerror(errno);
      ::close(m_fd);
      m_fd = -1;
      return;
    }
}

FileLock::~FileLock() {
  if (m_fd >= 0) ::close(m_fd);
}

bool write_all(int fd, std::string_view data) {
  while (!data.empty()) {
    const ssize_t n = ::write(fd, data.data(), data.size());
    if (n < 0 && errno == EINTR) continue;
    if (n <= 0) return false;
    data.remove_prefix(static_cast<size_t>(n));
  }
  return true;
}

bool write_file_atomic(const std::string& path, std::string_view text, unsigned mode, bool sync) {
  const std::filesystem::path target(path);
  const std::filesystem::path dir = target.has_parent_path() ? target.parent_path() : std::filesystem::path(".");
  const std::string tmp = (dir / ("." + target.filename().string() + ".tmp." + std::to_string(::getpid()))).string();
  const int fd = ::open(tmp.c_str(), O_WRONLY | O_CREAT | O_TRUNC | O_CLOEXEC, static_cast<mode_t>(mode));
  if (fd < 0) return false;
  bool ok = write_all(fd, text) && (!sync || ::fsync(fd) == 0);
  ok = ::close(fd) == 0 && ok;
  // Unsynced, the old file goes first: ext4 flushes a file renamed over another at once (auto_da_alloc), which
  // took half of writing an array's 1,000 report pages again (bench/report/RESULTS.md).
  if (ok && !sync) ::unlink(path.c_str());
  if (!ok || ::rename(tmp.c_str(), path.c_str()) != 0) {
    const int err = errno;
    ::unlink(tmp.c_str());
    errno = err;
    return false;
  }
  // The rename is durable once the folder is synced.
  if (!sync) return true;
  if (const int d = ::open(dir.c_str(), O_RDONLY | O_DIRECTORY | O_CLOEXEC); d >= 0) {
    ::fsync(d);
    ::close(d);
  }
  return true;
}

bool sync_filesystem(const std::string& path) {
  const int fd = ::open(path.c_str(), O_RDONLY | O_CLOEXEC);
  if (fd < 0) return false;
  const bool ok = ::syncfs(fd) == 0;
  const int err = errno;
  ::close(fd);
  errno = err;
  return ok;
}

std::string FileFollower::read_new() {
  std::error_code ec;
  std::uintmax_t size = std::filesystem::file_size(m_path, ec);
  if (ec) return {};
  if (size < m_offset) m_offset = 0;
  if (size == m_offset) return {};
  std::ifstream in(m_path, std::ios::binary);
  in.seekg(static_cast<std::streamoff>(m_offset));
  std::string bytes(size - m_offset, '\0');
  in.read(bytes.data(), static_cast<std::streamsize>(bytes.size()));
  bytes.resize(static_cast<size_t>(in.gcount()));
  m_offset += bytes.size();
  return bytes;
}

}  // namespace hpclaunch
