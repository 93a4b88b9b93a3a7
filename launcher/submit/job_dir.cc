#include "submit/job_dir.h"

#include <fcntl.h>
#include <sys/stat.h>
#include <unistd.h>

#include <cerrno>
#include <cstring>

#include <chrono>
#include <ctime>
#include <filesystem>
#include <fmt/core.h>

#include "util/error.h"
#include "util/file.h"

namespace hpclaunch {

namespace fs = std::filesystem;

namespace {

void write_file(const fs::path& path, const std::string& text, mode_t mode) {
  int fd = ::open(path.c_str(), O_WRONLY | O_CREAT | O_TRUNC | O_CLOEXEC, mode);
  if (fd < 0) throw failure(path.string(), std::string("cannot write: ") + std::strerror(errno), "check the directory's permissions and free space");
  size_t done = 0;
  while (done < text.size()) {
    ssize_t n = ::write(fd, text.data() + done, text.size() - done);
    if (n < 0) {
      int e = errno;
      ::close(fd);
      throw failure(path.string(), std::string("cannot write: ") + std::strerror(e), "check free space");
    }
    done += static_cast<size_t>(n);
  }
  if (::fsync(fd) != 0 || ::close(fd) != 0)
    throw failure(path.string(), std::string("cannot write: ") + std::strerror(errno), "check free space");
}

}  // namespace

std::string choose_job_dir(const std::string& requested, const std::string& job_name, const std::string& stamp) {
  std::error_code ec;
  if (!requested.empty()) {
    if (fs::exists(requested, ec) && !(fs::is_directory(requested, ec) && fs::is_empty(requested, ec)))
      throw Error("--job-dir", "'" + requested + "' already exists and is not an empty directory",
                  "give a new directory, or leave --job-dir out");
    return fs::absolute(requested).lexically_normal().string();
  }
  fs::path base = fs::current_path() / "hpclaunch-jobs";
  fs::path dir = base / (job_name + "-" + stamp);
  for (int n = 2; fs::exists(dir, ec); ++n) dir = base / fmt::format("{}-{}-{}", job_name, stamp, n);
  return dir.string();
}

std::string reserve_job_dir(const std::string& requested, const std::string& job_name, const std::string& stamp) {
  std::error_code ec;
  if (!requested.empty()) {
    std::string dir = choose_job_dir(requested, job_name, stamp);
    fs::path parent = fs::path(dir).parent_path();
    fs::create_directories(parent, ec);
    if (ec) throw failure(parent.string(), "cannot create the job directory: " + ec.message(), "check permissions, or pass --job-dir");
    if (::mkdir(dir.c_str(), 0700) != 0 && errno != EEXIST)  // an existing one is empty (choose_job_dir checked)
      throw failure(dir, std::string("cannot create the job directory: ") + std::strerror(errno),
                    "check permissions, or pass another --job-dir");
    return dir;
  }
  fs::path base = fs::current_path() / "hpclaunch-jobs";
  fs::create_directories(base, ec);
  if (ec) throw failure(base.string(), "cannot create the job directory: " + ec.message(), "check permissions, or pass --job-dir");
  for (int n = 1;; ++n) {
    fs::path dir = n == 1 ? base / (job_name + "-" + stamp) : base / fmt::format("{}-{}-{}", job_name, stamp, n);
    if (::mkdir(dir.c_str(), 0700) == 0) return dir.string();
    if (errno != EEXIST || n == 100000)
      throw failure(dir.string(), std::string("cannot create the job directory: ") + std::strerror(errno),
                    "check permissions, or pass --job-dir");
  }
}

mode_t parse_job_dir_mode(const std::string& text) {
  mode_t mode = 0;
  bool ok = !text.empty() && text.size() <= 4;
  for (char c : text) {
    ok = ok && c >= '0' && c <= '7';
    mode = mode * 8 + static_cast<mode_t>(c - '0');
  }
  if (!ok || mode > 0777)
    throw Error("--job-dir-mode", "'" + text + "' is not an octal mode", "give one such as 700, 750 or 755");
  if ((mode & 0700) != 0700)
    throw Error("--job-dir-mode", fmt::format("{:o} does not let you read, write and enter your own job directory", mode),
                "start it with 7, e.g. 700, 750 or 755");
  return mode;
}

void write_job_dir(const std::string& dir, const std::string& script, const nlohmann::json& plan,
                   const std::vector<std::pair<std::string, std::string>>& files, mode_t mode,
                   const std::function<void(const std::string&)>& fill) {
  fs::path final_dir(dir);
  std::error_code ec;
  fs::create_directories(final_dir.parent_path(), ec);
  if (ec) throw failure(final_dir.parent_path().string(), "cannot create the job directory: " + ec.message(), "check permissions, or pass --job-dir");
  fs::path tmp = final_dir.parent_path() / fmt::format(".{}.tmp-{}", final_dir.filename().string(), ::getpid());
  fs::remove_all(tmp, ec);
  if (::mkdir(tmp.c_str(), 0700) != 0 || ::chmod(tmp.c_str(), mode) != 0)
    throw failure(final_dir.parent_path().string(), std::string("cannot create the job directory: ") + std::strerror(errno),
                  "check permissions, or pass --job-dir");
  try {
    write_file(tmp / "job.sh", script, 0755);
    write_file(tmp / "plan.json", plan.dump(2) + "\n", 0644);
    for (const auto& [name, text] : files) {
      fs::create_directories((tmp / name).parent_path());
      write_file(tmp / name, text, 0644);
    }
    if (fill) fill(tmp.string());
    // Over the empty directory reserve_job_dir made (rename replaces an empty one, never a filled one).
    fs::rename(tmp, final_dir);
  } catch (const fs::filesystem_error& e) {
    fs::remove_all(tmp, ec);
    fs::remove(final_dir, ec);  // the reserved, empty one (a filled one is not removed)
    throw failure(dir, std::string("cannot create the job directory: ") + e.code().message(), "check permissions and free space");
  } catch (...) {
    fs::remove_all(tmp, ec);
    fs::remove(final_dir, ec);
    throw;
  }
}

void record_submission(const std::string& dir, const nlohmann::json& record) {
  if (!write_file_atomic((fs::path(dir) / "job.json").string(), record.dump(2) + "\n"))
    throw failure(dir, std::string("cannot record the job id: ") + std::strerror(errno), "check the directory");
}

void remove_job_dir(const std::string& dir) {
  std::error_code ec;
  fs::remove_all(dir, ec);
}

std::string timestamp_now() {
  std::time_t t = std::chrono::system_clock::to_time_t(std::chrono::system_clock::now());
  std::tm tm{};
  localtime_r(&t, &tm);
  char buf[32];
  std::strftime(buf, sizeof buf, "%Y%m%d-%H%M%S", &tm);
  return buf;
}

std::string rfc3339(std::time_t t) {
  std::tm tm{};
  localtime_r(&t, &tm);
  char buf[40];
  std::strftime(buf, sizeof buf, "%Y-%m-%dT%H:%M:%S%z", &tm);
  std::string out = buf;  // +0100: RFC 3339 writes +01:00
  if (out.size() >= 5) out.insert(out.size() - 2, ":");
  return out;
}

std::string submitted_now() { return rfc3339(std::chrono::system_clock::to_time_t(std::chrono::system_clock::now())); }

}  // namespace hpclaunch
