#include "jobs/job_state.h"
#include "util/file.h"

#include <signal.h>
#include <sys/types.h>
#include <unistd.h>

#include <cerrno>
#include <cstring>
#include <filesystem>
#include <regex>

#include <nlohmann/json.hpp>

#include "util/error.h"
#include "util/strings.h"

namespace hpclaunch {

namespace fs = std::filesystem;

const char* to_string(Phase p) {
  switch (p) {
    case Phase::pending: return "pending";
    case Phase::running: return "running";
    case Phase::completed: return "completed";
    case Phase::failed: return "failed";
    case Phase::cancelled: return "cancelled";
    case Phase::timeout: return "timeout";
    case Phase::finished_unknown: return "finished";
  }
  return "?";
}

std::optional<Phase> slurm_phase(std::string_view state) {
  std::string s(trim(state));
  if (size_t sp = s.find(' '); sp != std::string::npos) s = s.substr(0, sp);  // "CANCELLED by 0"
  static const std::pair<const char*, Phase> k_states[] = {
      {"PENDING", Phase::pending},       {"REQUEUED", Phase::pending},     {"REQUEUE_HOLD", Phase::pending},
      {"REQUEUE_FED", Phase::pending},   {"RESV_DEL_HOLD", Phase::pending}, {"CONFIGURING", Phase::pending},
      {"RUNNING", Phase::running},       {"COMPLETING", Phase::running},   {"SUSPENDED", Phase::running},
      {"STOPPED", Phase::running},       {"SIGNALING", Phase::running},    {"STAGE_OUT", Phase::running},
      {"RESIZING", Phase::running},      {"COMPLETED", Phase::completed},  {"CANCELLED", Phase::cancelled},
      {"TIMEOUT", Phase::timeout},       {"DEADLINE", Phase::timeout},     {"FAILED", Phase::failed},
      {"NODE_FAIL", Phase::failed},      {"BOOT_FAIL", Phase::failed},     {"OUT_OF_MEMORY", Phase::failed},
      {"PREEMPTED", Phase::failed},      {"SPECIAL_EXIT", Phase::failed},  {"REVOKED", Phase::failed},
  };
  for (const auto& [word, phase] : k_states)
    if (s == word) return phase;
  return std::nullopt;
}

std::optional<JobState> parse_squeue(std::string_view out) {
  for (const auto& line : split(out, '\n')) {
    std::string word(trim(line));
    if (word.empty()) continue;
    auto phase = slurm_phase(word);
    if (!phase) return std::nullopt;
    JobState s;
    s.phase = *phase;
    s.raw = word;
    return s;
  }
  return std::nullopt;
}

namespace {

// The value of `key=` in scontrol's `key=value key=value` lines.
std::optional<std::string> scontrol_field(std::string_view out, const std::string& key) {
  std::regex re("(^|\\s)" + key + "=(\\S*)");
  std::string text(out);
  std::smatch m;
  if (!std::regex_search(text, m, re)) return std::nullopt;
  return m[2].str();
}

// The value of `key = value` in qstat -f output (continuation lines are not needed for the keys read here).
std::optional<std::string> qstat_field(std::string_view out, std::string_view key) {
  for (const auto& line : split(out, '\n')) {
    std::string_view l = trim(line);
    size_t eq = l.find(" = ");
    if (eq == std::string_view::npos) continue;
    if (trim(l.substr(0, eq)) == key) return std::string(trim(l.substr(eq + 3)));
  }
  return std::nullopt;
}

}  // namespace

std::optional<JobState> parse_scontrol_job(std::string_view out) {
  auto state = scontrol_field(out, "JobState");
  if (!state) return std::nullopt;
  auto phase = slurm_phase(*state);
  if (!phase) return std::nullopt;
  JobState s;
  s.phase = *phase;
  s.raw = *state;
  if (auto reason = scontrol_field(out, "Reason"); reason && *reason != "None") s.reason = *reason;
  if (auto code = scontrol_field(out, "ExitCode"); code && s.finished()) {
    long long v = 0;
    if (parse_int(code->substr(0, code->find(':')), &v)) s.exit_code = static_cast<int>(v);
  }
  return s;
}

std::optional<JobState> parse_qstat_full(std::string_view out) {
  auto state = qstat_field(out, "job_state");
  if (!state || state->empty()) return std::nullopt;
  JobState s;
  s.raw = *state;
  auto exit = qstat_field(out, "Exit_status");
  if (!exit) exit = qstat_field(out, "exit_status");  // Torque
  long long code = 0;
  bool has_code = exit && parse_int(*exit, &code);
  if (has_code) s.exit_code = static_cast<int>(code);
  switch ((*state)[0]) {
    case 'Q': case 'H': case 'W': case 'T': case 'M':
      s.phase = Phase::pending;
      break;
    case 'R': case 'E': case 'S': case 'U': case 'B':
      s.phase = Phase::running;
      break;
    case 'F': case 'X': case 'C':
      // PBS Pro: a job killed by signal N exits 256+N (qdel sends SIGTERM); negative codes are the server's
      // own (e.g. walltime exceeded).
      if (!has_code) s.phase = Phase::finished_unknown;
      else if (code == 0) s.phase = Phase::completed;
      else if (code == 256 + SIGTERM || code == 256 + SIGKILL) s.phase = Phase::cancelled;
      else s.phase = Phase::failed;
      break;
    default:
      return std::nullopt;
  }
  if (auto comment = qstat_field(out, "comment")) s.reason = *comment;
  return s;
}

JobState parse_local_state(std::string_view json, bool alive, const std::string& path) {
  nlohmann::json j = nlohmann::json::parse(json, nullptr, false);
  if (j.is_discarded() || !j.is_object() || !j.contains("state"))
    throw failure(path, "is not a local job state (JSON with \"state\")", "the job directory was changed by hand");
  const std::string word = j.value("state", "");
  JobState s;
  // Slurm's words, so that `jobs` reads the same for every site.
  if (word == "running") {
    s.phase = alive ? Phase::running : Phase::failed;
    s.raw = alive ? "RUNNING" : "FAILED";
    if (!alive) s.reason = "its runner died without recording an exit status";
    return s;
  }
  if (word == "exited" && j.contains("exit_code") && j["exit_code"].is_number_integer()) {
    int code = j["exit_code"].get<int>();
    s.exit_code = code;
    s.phase = code == 0 ? Phase::completed
              : (code == 128 + SIGTERM || code == 128 + SIGINT || code == 128 + SIGKILL) ? Phase::cancelled
                                                                                         : Phase::failed;
    s.raw = code == 0 ? "COMPLETED" : s.phase == Phase::cancelled ? "CANCELLED" : "FAILED";
    return s;
  }
  throw failure(path, "has an unknown state '" + word + "'", "the job directory was changed by hand");
}

bool is_unknown_job_answer(const ProcessResult& r) {
  if (r.exit_code == 0 || r.exit_code == 127) return false;
  std::string text = r.err + r.out;
  return text.find("Invalid job id") != std::string::npos || text.find("Unknown Job Id") != std::string::npos ||
         text.find("Job has finished") != std::string::npos;
}

std::string describe(const JobState& s) {
  if (s.phase == Phase::finished_unknown)
    return "finished (state unknown to scheduler" + (s.reason.empty() ? std::string() : "; " + s.reason) + ")";
  std::string out = s.raw.empty() ? to_string(s.phase) : s.raw;
  if (s.phase == Phase::pending && !s.reason.empty()) return out + " (" + s.reason + ")";
  if (s.finished() && s.exit_code && *s.exit_code != 0) out += " (exit " + std::to_string(*s.exit_code) + ")";
  if (s.finished() && !s.reason.empty() && s.reason != "NonZeroExitCode" && !s.exit_code) out += " (" + s.reason + ")";
  return out;
}

namespace {

// One line of a command's complaint: the first non-empty line of stderr (or stdout).
std::string first_line(const ProcessResult& r) {
  std::string text(trim(r.err.empty() ? r.out : r.err));
  size_t nl = text.find('\n');
  return nl == std::string::npos ? text : text.substr(0, nl);
}

[[noreturn]] void unreachable(const std::vector<std::string>& argv, const ProcessResult& r, const std::string& fix) {
  std::string what = r.exit_code == 127 ? "not found on this machine" : "failed (exit " + std::to_string(r.exit_code) + ")";
  std::string msg = first_line(r);
  throw failure(join(argv, " "), what + (msg.empty() ? "" : ": " + msg), fix);
}

const char* k_slurm_fix = "the scheduler cannot be asked: check that slurmctld is up and SLURM_CONF points at it (`scontrol ping`)";
const char* k_pbs_fix = "the scheduler cannot be asked: check that the PBS server is up (`qstat -B`)";

// What the job directory shows about a job its scheduler has forgotten.
JobState forgotten(const JobRecord& job) {
  JobState s;
  s.phase = Phase::finished_unknown;
  std::error_code ec;
  for (const auto& out : output_candidates(job))
    if (fs::exists(out, ec)) {
      s.reason = "its output " + fs::path(out).filename().string() + " is in the job directory";
      return s;
    }
  s.reason = "no output in the job directory";
  return s;
}

JobState query_slurm(const JobRecord& job, const CommandRunner& run) {
  std::vector<std::string> squeue = {"squeue", "-h", "-t", "all", "-j", job.job_id, "-o", "%T"};
  ProcessResult r = run(squeue);
  if (r.exit_code == 0) {
    if (auto s = parse_squeue(r.out)) {
      // squeue has the word; scontrol adds the reason and the exit code while it still knows the job.
      ProcessResult c = run({"scontrol", "show", "job", job.job_id});
      if (c.exit_code == 0)
        if (auto detailed = parse_scontrol_job(c.out)) return *detailed;
      return *s;
    }
  } else if (!is_unknown_job_answer(r)) {
    unreachable(squeue, r, k_slurm_fix);
  }
  std::vector<std::string> scontrol = {"scontrol", "show", "job", job.job_id};
  ProcessResult c = run(scontrol);
  if (c.exit_code == 0) {
    if (auto s = parse_scontrol_job(c.out)) return *s;
  } else if (!is_unknown_job_answer(c)) {
    unreachable(scontrol, c, k_slurm_fix);
  }
  return forgotten(job);
}

JobState query_pbs(const JobRecord& job, const CommandRunner& run) {
  for (bool history : {false, true}) {
    std::vector<std::string> qstat = {"qstat", "-f", job.job_id};
    if (history) qstat.insert(qstat.begin() + 1, "-x");
    ProcessResult r = run(qstat);
    if (r.exit_code == 0) {
      if (auto s = parse_qstat_full(r.out)) return *s;
      continue;
    }
    if (!is_unknown_job_answer(r)) {
      // Torque has no -x: a usage complaint there means "no history", not "no server".
      if (history && (r.err.find("invalid option") != std::string::npos || r.err.find("usage") != std::string::npos))
        break;
      unreachable(qstat, r, k_pbs_fix);
    }
  }
  return forgotten(job);
}

bool pid_alive(long long pid) { return pid > 0 && (::kill(static_cast<pid_t>(pid), 0) == 0 || errno == EPERM); }

std::optional<std::pair<std::string, long long>> read_local_state(const JobRecord& job) {
  fs::path path = fs::path(job.dir) / "state.json";
  auto text = read_file(path.string());
  if (!text) return std::nullopt;
  nlohmann::json j = nlohmann::json::parse(*text, nullptr, false);
  long long pid = j.is_object() ? j.value("pid", 0LL) : 0;
  return std::make_pair(*text, pid);
}

JobState query_local(const JobRecord& job) {
  const std::string path = (fs::path(job.dir) / "state.json").string();
  for (int attempt = 0;; ++attempt) {
    auto state = read_local_state(job);
    if (!state) return forgotten(job);  // a job run before the runner wrote state.json
    JobState s = parse_local_state(state->first, pid_alive(state->second), path);
    // The runner records the exit right after reaping the job: a gone pid still marked running may be that moment.
    if (s.phase != Phase::failed || s.exit_code || attempt == 3) return s;
    ::usleep(100000);
  }
}

}  // namespace

JobState query_state(const JobRecord& job, const CommandRunner& run) {
  if (!job.dir_exists)
    throw failure(job.dir, "the job directory no longer exists", "give another job; `hpclaunch jobs` lists them");
  if (!job.submitted || job.job_id.empty())
    throw failure(job.dir + "/job.json", "is missing: the job was never accepted by a scheduler",
                  "resubmit it with `hpclaunch submit`");
  if (job.scheduler == "slurm") return query_slurm(job, run);
  if (job.scheduler == "pbs") return query_pbs(job, run);
  if (job.scheduler == "local") return query_local(job);
  throw failure(job.dir + "/job.json", "names an unknown scheduler '" + job.scheduler + "'", "expected slurm, pbs or local");
}

void cancel_job(const JobRecord& job, const CommandRunner& run) {
  if (!job.dir_exists || !job.submitted) (void)query_state(job, run);  // throws the right message
  if (job.scheduler == "local") {
    auto state = read_local_state(job);
    if (!state || state->second <= 0 || !pid_alive(state->second))
      throw failure(job.job_id, "is not running on this machine", "nothing to cancel");
    // The runner started the script in its own process group (local_job.cc): signal all of it.
    if (::kill(-static_cast<pid_t>(state->second), SIGTERM) != 0)
      throw failure(job.job_id, std::string("cannot signal its process group: ") + std::strerror(errno));
    return;
  }
  std::vector<std::string> argv = job.scheduler == "pbs" ? std::vector<std::string>{"qdel", job.job_id}
                                                         : std::vector<std::string>{"scancel", job.job_id};
  ProcessResult r = run(argv);
  if (r.exit_code != 0) {
    if (is_unknown_job_answer(r))
      throw failure(argv[0], "job " + job.job_id + " is unknown to the scheduler (it has finished)", "nothing to cancel");
    unreachable(argv, r, job.scheduler == "pbs" ? k_pbs_fix : k_slurm_fix);
  }
}

}  // namespace hpclaunch
