#include "submit/job_index.h"

#include <fcntl.h>
#include <sys/stat.h>
#include <unistd.h>

#include <cerrno>
#include <cstdlib>
#include <cstring>
#include <filesystem>

#include <nlohmann/json.hpp>

#include "util/error.h"
#include "util/file.h"

namespace hpclaunch {

namespace fs = std::filesystem;

NLOHMANN_DEFINE_TYPE_NON_INTRUSIVE(JobIndexEntry, dir)

std::string index_line(const JobIndexEntry& e) {
  try {
    return nlohmann::json(e).dump() + "\n";
  } catch (const nlohmann::json::type_error&) {
    // A directory whose name is not UTF-8 (a Latin-1 byte), which JSON cannot hold: the bare directory, as indexes
    // before the JSON entries had it, which every reader still takes (the fuzz target job_index found it: the
    // exception escaped after the job was submitted).
    return e.dir + "\n";
  }
}

namespace {

// The index's lock: jobs.lock beside it, its folder made first.
fs::path index_lock_path(const fs::path& index) {
  std::error_code ec;
  fs::create_directories(index.parent_path(), ec);
  return index.string() + ".lock";
}

}  // namespace

std::string job_index_path() {
  const char* state = std::getenv("XDG_STATE_HOME");
  fs::path base = state && *state ? fs::path(state) : fs::path(std::getenv("HOME") ? std::getenv("HOME") : "/tmp") / ".local" / "state";
  return (base / "hpclaunch" / "jobs").string();
}

size_t complete_lines_size(std::string_view text) {
  size_t last = text.rfind('\n');
  return last == std::string_view::npos ? 0 : last + 1;
}

std::vector<std::string> parse_job_index(std::string_view text) {
  std::vector<std::string> out;
  text = text.substr(0, complete_lines_size(text));
  while (!text.empty()) {
    size_t nl = text.find('\n');
    std::string_view line = text.substr(0, nl);
    text.remove_prefix(nl + 1);
    if (line.empty()) continue;
    if (line.front() != '{') {  // an index from before the entries were JSON: the directory itself
      out.emplace_back(line);
      continue;
    }
    auto j = nlohmann::json::parse(line, nullptr, /*allow_exceptions=*/false);
    if (j.is_object() && j.contains("dir") && j["dir"].is_string() && !j["dir"].get<std::string>().empty())
      out.push_back(j.get<JobIndexEntry>().dir);  // anything else (a damaged line) is skipped
  }
  return out;
}

bool add_to_job_index(const std::string& job_dir, std::string* err) {
  fs::path path = job_index_path();
  FileLock lock(index_lock_path(path).string());
  if (!lock.held()) {
    *err = lock.error();
    return false;
  }
  int fd = ::open(path.c_str(), O_RDWR | O_CREAT | O_APPEND | O_CLOEXEC, 0600);
  if (fd < 0) {
    *err = path.string() + ": " + std::strerror(errno);
    return false;
  }
  // A writer killed half-way left a tail without '\n': cut it, or this entry would be glued to it.
  bool ok = true;
  struct stat st {};
  if (::fstat(fd, &st) == 0 && st.st_size > 0) {
    char last = '\n';
    if (::pread(fd, &last, 1, st.st_size - 1) == 1 && last != '\n') {
      std::string text = read_file(path.string()).value_or("");
      ok = ::ftruncate(fd, static_cast<off_t>(complete_lines_size(text))) == 0;
    }
  }
  ok = ok && write_all(fd, index_line({job_dir})) && ::fdatasync(fd) == 0;
  if (!ok) *err = path.string() + ": " + std::strerror(errno);
  ::close(fd);
  return ok;
}

std::vector<std::string> read_job_index() { return parse_job_index(read_file(job_index_path()).value_or("")); }

std::vector<std::string> prune_job_index(const std::function<bool(const std::string& dir)>& keep) {
  fs::path path = job_index_path();
  FileLock lock(index_lock_path(path).string());
  if (!lock.held()) throw failure(path.string(), "cannot lock the job index: " + lock.error(), "check its directory's permissions");
  std::string text;
  std::vector<std::string> dropped;
  for (const auto& dir : parse_job_index(read_file(path.string()).value_or("")))
    if (keep(dir)) text += index_line({dir});
    else dropped.push_back(dir);
  if (dropped.empty()) return dropped;
  if (!write_file_atomic(path.string(), text))
    throw failure(path.string(), std::string("cannot rewrite the job index: ") + std::strerror(errno), "check free space and permissions");
  return dropped;
}

}  // namespace hpclaunch
