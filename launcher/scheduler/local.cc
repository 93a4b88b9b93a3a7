#include "scheduler/local.h"

#include <signal.h>
#include <sys/types.h>
#include <unistd.h>

#include <cerrno>
#include <cstring>
#include <filesystem>

#include "scheduler/local_job.h"
#include "util/error.h"
#include "util/file.h"

namespace hpclaunch {

namespace fs = std::filesystem;

namespace {

bool pid_alive(long long pid) { return pid > 0 && (::kill(static_cast<pid_t>(pid), 0) == 0 || errno == EPERM); }

std::string state_path(const JobRecord& job) { return (fs::path(job.dir) / "state.json").string(); }

// state.json's text and the pid it records; nullopt when there is none yet.
std::optional<std::pair<std::string, long long>> read_state(const JobRecord& job) {
  auto text = read_file(state_path(job));
  if (!text) return std::nullopt;
  nlohmann::json j = nlohmann::json::parse(*text, nullptr, false);
  return std::make_pair(*text, j.is_object() && j.contains("pid") && j["pid"].is_number_integer() ? j["pid"].get<long long>() : 0LL);
}

}  // namespace

JobState parse_local_state(std::string_view json, bool alive, const std::string& path) {
  nlohmann::json j = nlohmann::json::parse(json, nullptr, false);
  LocalStateFile file;
  try {
    if (j.is_discarded() || !j.is_object()) throw std::invalid_argument("not an object");
    file = j.get<LocalStateFile>();
  } catch (const std::exception&) {
    throw failure(path, "is not a local job state (JSON with \"state\")", "the job directory was changed by hand");
  }
  JobState s;
  // Slurm's words, so that `jobs` reads the same for every site.
  if (file.state == "running") {
    s.phase = alive ? Phase::running : Phase::failed;
    s.raw = alive ? "RUNNING" : "FAILED";
    if (!alive) s.reason = "its runner died without recording an exit status";
    return s;
  }
  if (file.state == "exited" && file.exit_code) {
    int code = *file.exit_code;
    s.exit_code = code;
    s.phase = code == 0 ? Phase::completed
              : (code == 128 + SIGTERM || code == 128 + SIGINT || code == 128 + SIGKILL) ? Phase::cancelled
                                                                                         : Phase::failed;
    s.raw = code == 0 ? "COMPLETED" : s.phase == Phase::cancelled ? "CANCELLED" : "FAILED";
    return s;
  }
  throw failure(path, "has an unknown state '" + file.state + "'", "the job directory was changed by hand");
}

std::string LocalBackend::submit(const std::string&, const std::vector<std::string>& options, const CommandRunner&) const {
  if (!options.empty())
    throw Error("--after", "the local site runs each job in the foreground as it is submitted: there is nothing to wait for",
                "submit the jobs one after another");
  return new_local_job_id();
}

std::optional<int> LocalBackend::run_in_foreground(const std::string& script, const std::string& job_dir,
                                                   const std::string& job_id) const {
  return run_local_job(script, job_dir, job_id);
}

JobState LocalBackend::query(const JobRecord& job, const CommandRunner&) const {
  require_submitted(job);
  const std::string path = state_path(job);
  for (int attempt = 0;; ++attempt) {
    auto state = read_state(job);
    if (!state) return forgotten_job(output_files(job));  // a job run before the runner wrote state.json
    JobState s = parse_local_state(state->first, pid_alive(state->second), path);
    // The runner records the exit right after reaping the job: a gone pid still marked running may be that moment.
    if (s.phase != Phase::failed || s.exit_code || attempt == 3) return s;
    ::usleep(100000);
  }
}

void LocalBackend::cancel(const JobRecord& job, const CommandRunner&) const {
  require_submitted(job);
  auto state = read_state(job);
  long long pid = state ? state->second : 0;
  if (pid <= 0 || !pid_alive(pid)) throw failure(job.job_id, "is not running on this machine", "nothing to cancel");
  // The runner started the script in its own process group (local_job.cc): signal all of it.
  if (::kill(-static_cast<pid_t>(pid), SIGTERM) != 0)
    throw failure(job.job_id, std::string("cannot signal its process group: ") + std::strerror(errno));
}

std::vector<std::string> LocalBackend::output_files(const JobRecord& job) const {
  return {(fs::path(job.dir) / "output.log").string()};
}

}  // namespace hpclaunch
