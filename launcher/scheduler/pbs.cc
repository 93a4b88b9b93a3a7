#include "scheduler/pbs.h"

#include <signal.h>

#include <cctype>
#include <filesystem>
#include <regex>

#include "util/error.h"
#include "util/strings.h"

namespace hpclaunch {

namespace fs = std::filesystem;

namespace {

const char* k_fix = "the scheduler cannot be asked: check that the PBS server is up (`qstat -B`)";

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

std::string numeric_prefix(const std::string& id) {
  size_t n = 0;
  while (n < id.size() && std::isdigit(static_cast<unsigned char>(id[n]))) ++n;
  return id.substr(0, n);
}
}  // namespace

std::string parse_qsub_answer(const ProcessResult& answer) {
  throw_if_refused("qsub", answer);
  std::string out(trim(answer.out));
  static const std::regex k_id("([0-9]+(\\[[0-9]*\\])?)(\\.[A-Za-z0-9_.-]+)?");
  if (std::regex_match(out, k_id)) return out;
  throw failure("qsub", "answered '" + out + "', which holds no job id", "check the scheduler's state with squeue/qstat");
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

bool pbs_unknown_job(const ProcessResult& r) {
  if (r.exit_code == 0 || r.exit_code == 127) return false;
  std::string text = r.err + r.out;
  return text.find("Unknown Job Id") != std::string::npos || text.find("Job has finished") != std::string::npos;
}

std::string PbsBackend::submit(const std::string& script, const std::vector<std::string>& options,
                               const CommandRunner& run) const {
  // Each option is "-W depend=..." or "-J 0-3": qsub takes the flag and its value as two words.
  std::vector<std::string> argv = {"qsub"};
  for (const auto& o : options) {
    size_t sp = o.find(' ');
    argv.push_back(o.substr(0, sp));
    if (sp != std::string::npos) argv.push_back(o.substr(sp + 1));
  }
  argv.push_back(script);
  return parse_qsub_answer(run(argv));
}

JobState PbsBackend::query(const JobRecord& job, const CommandRunner& run) const {
  if (job.is_array()) return summarize_tasks(query_tasks(job, run));  // qstat -f of each subjob, 1234[3].server
  require_submitted(job);
  for (bool history : {false, true}) {
    std::vector<std::string> qstat = {"qstat", "-f", job.job_id};
    if (history) qstat.insert(qstat.begin() + 1, "-x");
    ProcessResult r = run(qstat);
    if (r.exit_code == 0) {
      if (auto s = parse_qstat_full(r.out)) return *s;
      continue;
    }
    if (!pbs_unknown_job(r)) {
      // Torque has no -x: a usage complaint there means "no history", not "no server".
      if (history && (r.err.find("invalid option") != std::string::npos || r.err.find("usage") != std::string::npos))
        break;
      command_failed(qstat, r, k_fix);
    }
  }
  return forgotten_job(output_files(job));
}

void PbsBackend::cancel(const JobRecord& job, const CommandRunner& run) const {
  require_submitted(job);
  run_cancel({"qdel", job.job_id}, job.job_id, pbs_unknown_job, k_fix, run);
}

std::vector<std::string> PbsBackend::output_files(const JobRecord& job) const {
  fs::path d(job.dir);
  std::vector<std::string> out;
  if (!job.job_id.empty()) {
    out.push_back((d / (job.job_id + ".OU")).string());
    if (!job.job_name.empty()) out.push_back((d / (job.job_name + ".o" + numeric_prefix(job.job_id))).string());
  }
  out.push_back((d / "output.log").string());
  return out;
}

std::vector<std::string> PbsBackend::array_options(int count, int max_concurrent) const {
  // qsub takes -J X-Y[:Z] with X < Y only (OpenPBS src/lib/Libcmds/chk_Jrange.c): one task is 0-1 in steps of 2.
  // `%M` sets the job's max_run_subjobs, at most M subjobs at once (OpenPBS qsub(1B), since 22.05: commit 50d9114;
  // docs/sweeps.md says what is verified of PBS Professional).
  std::string range = count == 1 ? "0-1:2" : "0-" + std::to_string(count - 1);
  if (max_concurrent > 0) range += "%" + std::to_string(max_concurrent);
  return {"-J " + range};
}

std::vector<std::string> PbsBackend::dependency_options(const std::vector<Dependency>& after) const {
  if (after.empty()) return {};
  return {"-W depend=" + dependency_list(after)};
}

}  // namespace hpclaunch
