#include "scheduler/slurm.h"

#include <filesystem>
#include <regex>

#include "util/error.h"
#include "util/strings.h"

namespace hpclaunch {

namespace fs = std::filesystem;

namespace {

const char* k_fix = "the scheduler cannot be asked: check that slurmctld is up and SLURM_CONF points at it (`scontrol ping`)";

// The value of `key=` in scontrol's `key=value key=value` lines.
std::optional<std::string> scontrol_field(std::string_view out, const std::string& key) {
  std::regex re("(^|\\s)" + key + "=(\\S*)");
  std::string text(out);
  std::smatch m;
  if (!std::regex_search(text, m, re)) return std::nullopt;
  return m[2].str();
}
// A task of an array that squeue no longer lists and that left no output.
JobState never_started() {
  JobState s;
  s.phase = Phase::cancelled;
  s.raw = "CANCELLED";
  s.reason = "before it started";
  return s;
}

}  // namespace

std::string parse_sbatch_answer(const ProcessResult& answer) {
  throw_if_refused("sbatch", answer);
  std::string out(trim(answer.out));
  static const std::regex k_id("([0-9]+)(;[A-Za-z0-9_.-]+)?");
  std::smatch m;
  if (std::regex_match(out, m, k_id)) return m[1].str();
  throw failure("sbatch", "answered '" + out + "', which holds no job id", "check the scheduler's state with squeue/qstat");
}

TestVerdict parse_sbatch_test_only(const ProcessResult& answer) {
  if (answer.exit_code == 127) command_failed({"sbatch", "--test-only"}, answer, "run hpclaunch on the cluster's login node");
  TestVerdict v;
  v.accepted = answer.exit_code == 0;
  v.message = first_line(answer);
  return v;
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

std::map<int, JobState> parse_squeue_tasks(std::string_view out) {
  std::map<int, JobState> tasks;
  for (const auto& line : split(out, '\n')) {
    auto words = split(trim(line), ' ');
    long long task = 0;
    if (words.size() < 2 || !parse_int(words[0], &task)) continue;  // "N/A": not an array task
    if (auto s = parse_squeue(words[1])) tasks[static_cast<int>(task)] = *s;
  }
  return tasks;
}

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

bool slurm_unknown_job(const ProcessResult& r) {
  if (r.exit_code == 0 || r.exit_code == 127) return false;
  return (r.err + r.out).find("Invalid job id") != std::string::npos;
}

std::string SlurmBackend::submit(const std::string& script, const std::vector<std::string>& options,
                                 const CommandRunner& run) const {
  std::vector<std::string> argv = {"sbatch", "--parsable"};
  argv.insert(argv.end(), options.begin(), options.end());
  argv.push_back(script);
  return parse_sbatch_answer(run(argv));
}

JobState SlurmBackend::query(const JobRecord& job, const CommandRunner& run) const {
  if (job.is_array()) return summarize_tasks(query_tasks(job, run));
  require_submitted(job);
  std::vector<std::string> squeue = {"squeue", "-h", "-t", "all", "-j", job.job_id, "-o", "%T"};
  std::vector<std::string> scontrol = {"scontrol", "show", "job", job.job_id};
  ProcessResult r = run(squeue);
  if (r.exit_code == 0) {
    if (auto s = parse_squeue(r.out)) {
      // squeue has the word; scontrol adds the reason and the exit code while it still knows the job.
      ProcessResult c = run(scontrol);
      if (c.exit_code == 0)
        if (auto detailed = parse_scontrol_job(c.out)) return *detailed;
      return *s;
    }
  } else if (!slurm_unknown_job(r)) {
    command_failed(squeue, r, k_fix);
  }
  ProcessResult c = run(scontrol);
  if (c.exit_code == 0) {
    if (auto s = parse_scontrol_job(c.out)) return *s;
  } else if (!slurm_unknown_job(c)) {
    command_failed(scontrol, c, k_fix);
  }
  JobState s = forgotten_job(output_files(job));
  return job.task && s.reason == k_no_output ? never_started() : s;  // an array task cancelled while pending
}

std::vector<JobState> SlurmBackend::query_tasks(const JobRecord& array, const CommandRunner& run) const {
  require_submitted(array);
  // One line per task (-r), pending ones too. A task squeue does not list has been forgotten (MinJobAge) if it
  // left output; without any it never started: Slurm drops a pending task that is cancelled from the list at once.
  std::vector<std::string> squeue = {"squeue", "-h", "-r", "-t", "all", "-j", array.job_id, "-o", "%K %T"};
  ProcessResult r = run(squeue);
  std::map<int, JobState> listed;
  if (r.exit_code == 0) listed = parse_squeue_tasks(r.out);
  else if (!slurm_unknown_job(r)) command_failed(squeue, r, k_fix);
  std::vector<JobState> out;
  for (int i = 0; i < array.array_tasks; ++i) {
    if (auto it = listed.find(i); it != listed.end()) {
      out.push_back(it->second);
      continue;
    }
    JobState s = forgotten_job(output_files(task_record(array, i)));
    if (s.reason == k_no_output) s = never_started();
    out.push_back(s);
  }
  return out;
}

void SlurmBackend::cancel(const JobRecord& job, const CommandRunner& run) const {
  require_submitted(job);
  run_cancel({"scancel", job.job_id}, job.job_id, slurm_unknown_job, k_fix, run);
}

void SlurmBackend::requeue_excluding(const std::string& job_id, const std::vector<std::string>& exclude,
                                     const CommandRunner& run) const {
  // Slurm changes ExcNodeList of pending jobs only: requeue first (the job is pending from then on, while this
  // script, which must ignore the SIGTERM that ends the run, still has KillWait seconds), then exclude.
  std::vector<std::string> requeue = {"scontrol", "requeue", job_id};
  if (ProcessResult r = run(requeue); r.exit_code != 0) command_failed(requeue, r, "the job ends here; resubmit it");
  if (exclude.empty()) return;
  std::vector<std::string> update = {"scontrol", "update", "JobId=" + job_id, "ExcNodeList=" + join(exclude, ",")};
  if (ProcessResult r = run(update); r.exit_code != 0)
    command_failed(update, r, "the job was requeued without the exclusion; `hpclaunch cancel` it if those nodes must stay out");
}

std::vector<std::string> SlurmBackend::output_files(const JobRecord& job) const {
  fs::path d(job.dir);
  std::vector<std::string> out;
  if (!job.job_id.empty()) out.push_back((d / ("slurm-" + job.job_id + ".out")).string());
  out.push_back((d / "output.log").string());
  return out;
}

std::optional<TestVerdict> SlurmBackend::test_only(const std::string& script, const std::vector<std::string>& options,
                                                   const CommandRunner& run) const {
  std::vector<std::string> argv = {"sbatch", "--test-only"};
  argv.insert(argv.end(), options.begin(), options.end());
  argv.push_back(script);
  return parse_sbatch_test_only(run(argv));
}

std::vector<std::string> SlurmBackend::array_options(int count, int max_concurrent) const {
  std::string spec = "--array=0-" + std::to_string(count - 1);
  if (max_concurrent > 0) spec += "%" + std::to_string(max_concurrent);
  return {spec};
}

std::vector<std::string> SlurmBackend::dependency_options(const std::vector<Dependency>& after) const {
  if (after.empty()) return {};
  return {"--dependency=" + dependency_list(after)};
}

}  // namespace hpclaunch
