#include "util/file.h"

#include <unistd.h>

#include <cerrno>

#include <cstdio>
#include <filesystem>
#include <fstream>
#include <sstream>

namespace hpclaunch {

std::optional<std::string> read_file(const std::string& path) {
  std::ifstream in(path, std::ios::binary);
  if (!in) return std::nullopt;
  std::ostringstream text;
  text << in.rdbuf();
  return text.str();
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

bool write_file_atomic(const std::string& path, const std::string& text) {
  std::string tmp = path + ".tmp";
  if (std::FILE* f = std::fopen(tmp.c_str(), "w")) {
    bool ok = std::fwrite(text.data(), 1, text.size(), f) == text.size();
    ok = std::fclose(f) == 0 && ok;
    if (ok && std::rename(tmp.c_str(), path.c_str()) == 0) return true;
    std::remove(tmp.c_str());
  }
  return false;
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
