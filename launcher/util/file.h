// Reading files: a whole file (the one place that does it; callers decide what a missing file means), and what a
// growing file has gained since the last look.
#pragma once
#include <cstdint>
#include <optional>
#include <string>
#include <string_view>

namespace hpclaunch {

// The file's bytes, or nullopt when it cannot be opened (errno says why).
std::optional<std::string> read_file(const std::string& path);

// Writes all of `data` to `fd`, again after EINTR and short writes. False (errno says why) when it cannot.
bool write_all(int fd, std::string_view data);

// Writes `text` to a temporary sibling (.NAME.tmp.PID) of `mode`, syncs it, renames it to `path` and syncs the
// folder, so a reader never sees half of it and a crash leaves the old file or the new one. False (errno says
// why, nothing left behind) when it cannot. The one write-then-rename of the launcher (job.json, state.json, the
// job index, excluded-nodes.json, failure.json, `sites learn --output`). `sync` false leaves out both syncs and
// removes the old file just before the rename (a reader sees the old file, for a moment none, or the new one, never
// half of one): for many files written at once (an array's report pages), made durable together by one
// sync_filesystem afterwards.
bool write_file_atomic(const std::string& path, std::string_view text, unsigned mode = 0644, bool sync = true);

// Syncs the filesystem that holds `path` (syncfs): the files written with write_file_atomic(..., sync = false)
// reach the disk in one go. False (errno says why) when it cannot.
bool sync_filesystem(const std::string& path);

// An exclusive flock on `path` (made 0600 if missing) for the lifetime of the object, waiting for another holder
// to let go; the kernel releases it when the holder dies. The one file lock of the launcher (the job index's
// jobs.lock, a submit token's lock).
class FileLock {
 public:
  explicit FileLock(const std::string& path);
  ~FileLock();
  FileLock(const FileLock&) = delete;
  FileLock& operator=(const FileLock&) = delete;
  bool held() const { return m_fd >= 0; }
  // "PATH: why" when it is not held.
  const std::string& error() const { return m_err; }

 private:
  int m_fd = -1;
  std::string m_err;
};

// Follows a file that grows (a job's output): each read_new() returns the bytes added since the last one ("" while
// the file is absent or unchanged). A file that shrank (rewritten: a requeued job's output) is read from its start.
class FileFollower {
 public:
  explicit FileFollower(std::string path) : m_path(std::move(path)) {}
  std::string read_new();
  const std::string& path() const { return m_path; }

 private:
  std::string m_path;
  std::uintmax_t m_offset = 0;
};

}  // namespace hpclaunch
