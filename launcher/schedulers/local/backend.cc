#include "schedulers/local/backend.h"

#include <signal.h>
#include <sys/types.h>
#include <unistd.h>

#include <cerrno>
#include <cstring>
#include <filesystem>

#include "schedulers/local/backend_job.h"
#include "util/error.h"
#include "util/file.h"
#include "util/json_numbers.h"

namespace hpclaunch {

namespace fs = std::filesystem;

namespace {

bool pid_alive(long long pid) { return pid > 0 && (::kill(static_cast<pid_t>(pid), 0) == 0 || errno == EPERM); }

std::string state_path(const JobRecord& job) { return (fs::path(job.dir) / "state.json").string(); }

// JOBDIR/state.json, or nullopt when there is none yet. Throws Error naming the file when it is not a local
// job state.
std::optional<LocalStateFile> read_state(const JobRecord& job) {
  auto text = read_file(state_path(job));
  if (!text) return std::nullopt;
  return parse_local_state_file(*text, state_path(job));
}

// read_state, with a file that is not a local job state taken as none (for deciding whether a runner lives).
std::optional<LocalStateFile> read_state_or_none(const JobRecord& job) {
  try {
    return read_state(job);
  } catch (const Error&) {
    return std::nullopt;
  }
}

// Whether the runner of the array `task` belongs to is still at work.
bool runner_alive(const JobRecord& task) {
  JobRecord array = task;
  array.dir = task.array_dir;
  auto state = read_state_or_none(array);
  return state && pid_alive(state->pid) && state->state == "running";
}

// A task of a local array that has not started: pending while its runner works, else never to start.
JobState waiting_task(const JobRecord& task) {
  JobState s;
  if (runner_alive(task)) {
    s.phase = Phase::pending;
    s.raw = "PENDING";
    s.reason = "waiting for an earlier task";
  } else {
    s.phase = Phase::cancelled;
    s.raw = "CANCELLED";
    s.reason = "never started: the array's runner ended first";
  }
  return s;
}

}  // namespace

LocalStateFile parse_local_state_file(std::string_view json, const std::string& path) {
  nlohmann::json j = nlohmann::json::parse(json, nullptr, false);
  try {
    if (j.is_discarded() || !j.is_object() || !floats_fit_int(j)) throw std::invalid_argument("not an object");
    return j.get<LocalStateFile>();
  } catch (const std::exception&) {
    throw failure(path, "is not a local job state (JSON with \"state\")", "the job directory was changed by hand");
  }
}

JobState local_job_state(const LocalStateFile& file, bool alive, const std::string& path) {
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

JobState parse_local_state(std::string_view json, bool alive, const std::string& path) {
  return local_job_state(parse_local_state_file(json, path), alive, path);
}

std::string LocalBackend::submit(const std::string&, const std::vector<std::string>& options, const CommandRunner&) const {
  if (!options.empty())
    throw Error("--after", "the local site runs each job in the foreground as it is submitted: there is nothing to wait for",
                "submit the jobs one after another");
  return new_local_job_id();
}

std::optional<int> LocalBackend::run_in_foreground(const std::string& script, const std::string& job_dir,
                                                   const std::string& job_id) const {
  JobRecord job = read_job_record(job_dir);
  if (job.is_array()) return run_local_array(script, job_dir, job_id, job.array_tasks, job.array_max_concurrent);
  return run_local_job(script, job_dir, job_id, job.max_requeues);
}

void LocalBackend::start_detached(const std::string& script, const std::string& job_dir,
                                  const std::string& job_id) const {
  JobRecord job = read_job_record(job_dir);
  run_detached(job_dir, [&](const Started& started) {
    if (job.is_array())
      return run_local_array(script, job_dir, job_id, job.array_tasks, job.array_max_concurrent, started);
    return run_local_job(script, job_dir, job_id, job.max_requeues, started);
  });
}

JobState LocalBackend::query(const JobRecord& job, const CommandRunner& run) const {
  if (job.is_array()) return summarize_tasks(query_tasks(job, run));
  require_submitted(job);
  for (int attempt = 0;; ++attempt) {
    auto state = read_state(job);
    if (!state && job.task) return waiting_task(job);
    if (!state) return forgotten_job(output_files(job));  // a job run before the runner wrote state.json
    // Between two runs of a job that requeues, the script's pid is gone but its runner lives.
    const bool alive = pid_alive(state->pid) || (state->runner && pid_alive(state->runner));
    JobState s = local_job_state(*state, alive, state_path(job));
    // The runner records the exit right after reaping the job: a gone pid still marked running may be that moment.
    if (s.phase != Phase::failed || s.exit_code || attempt == 3) return s;
    ::usleep(100000);
  }
}

void LocalBackend::cancel(const JobRecord& job, const CommandRunner&) const {
  require_submitted(job);
  auto state = read_state_or_none(job);
  long long pid = state ? state->pid : 0;
  if (!state && job.task && runner_alive(job)) {
    // Not started yet: recorded as cancelled, so the array's runner passes it over.
    write_local_state(job.dir, 0, 128 + SIGTERM);
    return;
  }
  const bool requeues = state && state->state == "running" && state->runner && pid_alive(state->runner);
  if (!requeues && (pid <= 0 || !pid_alive(pid)))
    throw failure(job.job_id, "is not running on this machine", "nothing to cancel");
  if (requeues || job.is_array()) {
    // The runner of an array or of a job that requeues (local_job.cc): it passes the signal on to the running
    // scripts and starts no more (between two runs of a job there is no script to signal).
    if (::kill(static_cast<pid_t>(requeues ? state->runner : pid), SIGTERM) != 0)
      throw failure(job.job_id, std::string("cannot signal its runner: ") + std::strerror(errno));
    return;
  }
  // The runner started the script in its own process group (local_job.cc): signal all of it.
  if (::kill(-static_cast<pid_t>(pid), SIGTERM) != 0)
    throw failure(job.job_id, std::string("cannot signal its process group: ") + std::strerror(errno));
}

void LocalBackend::send_signal(const JobRecord& job, int number) const {
  require_submitted(job);
  auto state = read_state_or_none(job);
  const long long pid = state && state->state == "running" ? state->pid : 0;
  if (pid <= 0 || !pid_alive(pid)) throw failure(job.job_id, "is not running on this machine", "nothing to signal");
  // An array's runner passes a warning on to its running tasks (local_job.cc); a job's script and its launch
  // (local-srun, mpirun) share one process group, and each passes it on to its own children.
  const pid_t target = job.is_array() ? static_cast<pid_t>(pid) : -static_cast<pid_t>(pid);
  if (::kill(target, number) != 0)
    throw failure(job.job_id, std::string("cannot signal it: ") + std::strerror(errno));
}

std::vector<std::string> LocalBackend::output_files(const JobRecord& job) const {
  return {(fs::path(job.dir) / "output.log").string()};
}

const SchedulerBackend& local_backend() {
  static const LocalBackend backend;
  return backend;
}

}  // namespace hpclaunch
