#include "scheduler/backend.h"

#include <filesystem>

#include "scheduler/local.h"
#include "scheduler/pbs.h"
#include "scheduler/slurm.h"
#include "util/error.h"
#include "util/strings.h"

namespace hpclaunch {

namespace fs = std::filesystem;

std::optional<int> SchedulerBackend::run_in_foreground(const std::string&, const std::string&,
                                                       const std::string&) const {
  return std::nullopt;
}

std::optional<TestVerdict> SchedulerBackend::test_only(const std::string&, const std::vector<std::string>&,
                                                       const CommandRunner&) const {
  return std::nullopt;
}

void SchedulerBackend::requeue_excluding(const std::string&, const std::vector<std::string>&,
                                         const CommandRunner&) const {
  throw failure(std::string("--requeue"), std::string(to_string(kind())) + " jobs cannot be requeued by hpclaunch",
                "resubmit the job without the bad nodes");
}

std::vector<JobState> SchedulerBackend::query_tasks(const JobRecord& array, const CommandRunner& run) const {
  std::vector<JobState> out;
  for (int i = 0; i < array.array_tasks; ++i) out.push_back(query(task_record(array, i), run));
  return out;
}

Dependency parse_dependency(const std::string& text) {
  Dependency d;
  size_t colon = text.rfind(':');
  std::string kind = colon == std::string::npos ? "ok" : text.substr(colon + 1);
  d.job_id = colon == std::string::npos ? text : text.substr(0, colon);
  static const std::pair<const char*, DependencyKind> k_kinds[] = {
      {"ok", DependencyKind::ok}, {"any", DependencyKind::any}, {"notok", DependencyKind::notok}};
  bool known = false;
  for (const auto& [word, k] : k_kinds)
    if (kind == word) d.kind = k, known = true;
  if (!known || d.job_id.empty())
    throw Error("--after", "'" + text + "' is not JOB[:ok|any|notok]",
                "e.g. --after 1234 (start once 1234 succeeded), --after 1234:any, --after 1234:notok");
  return d;
}

std::string to_string(const Dependency& d) {
  const char* word = d.kind == DependencyKind::ok ? "afterok" : d.kind == DependencyKind::any ? "afterany" : "afternotok";
  return std::string(word) + ":" + d.job_id;
}

const SchedulerBackend& backend_for(Scheduler scheduler) {
  static const SlurmBackend slurm;
  static const PbsBackend pbs;
  static const LocalBackend local;
  switch (scheduler) {
    case Scheduler::slurm: return slurm;
    case Scheduler::pbs: return pbs;
    case Scheduler::local: return local;
  }
  return slurm;
}

void require_submitted(const JobRecord& job) {
  if (!job.dir_exists)
    throw failure(job.dir, "the job directory no longer exists", "give another job; `hpclaunch jobs` lists them");
  if (!job.submitted || job.job_id.empty())
    throw failure(job.dir + "/job.json", "is missing: the job was never accepted by a scheduler",
                  "resubmit it with `hpclaunch submit`");
}

JobState forgotten_job(const std::vector<std::string>& outputs) {
  JobState s;
  s.phase = Phase::finished_unknown;
  std::error_code ec;
  for (const auto& out : outputs)
    if (fs::exists(out, ec)) {
      s.reason = "its output " + fs::path(out).filename().string() + " is in the job directory";
      return s;
    }
  s.reason = k_no_output;
  return s;
}

std::string first_line(const ProcessResult& r) {
  std::string text(trim(r.err.empty() ? r.out : r.err));
  size_t nl = text.find('\n');
  return nl == std::string::npos ? text : text.substr(0, nl);
}

void command_failed(const std::vector<std::string>& argv, const ProcessResult& r, const std::string& fix) {
  std::string what = r.exit_code == 127 ? "not found on this machine" : "failed (exit " + std::to_string(r.exit_code) + ")";
  std::string msg = first_line(r);
  throw failure(join(argv, " "), what + (msg.empty() ? "" : ": " + msg), fix);
}

std::string dependency_list(const std::vector<Dependency>& after) {
  std::vector<std::string> groups;
  for (DependencyKind kind : {DependencyKind::ok, DependencyKind::any, DependencyKind::notok}) {
    std::string group;
    for (const auto& d : after)
      if (d.kind == kind) group += group.empty() ? to_string(d) : ":" + d.job_id;
    if (!group.empty()) groups.push_back(group);
  }
  return join(groups, ",");
}

void run_cancel(const std::vector<std::string>& argv, const std::string& job_id,
                bool (*unknown_job)(const ProcessResult&), const std::string& fix, const CommandRunner& run) {
  ProcessResult r = run(argv);
  if (r.exit_code == 0) return;
  if (unknown_job(r))
    throw failure(argv[0], "job " + job_id + " is unknown to the scheduler (it has finished)", "nothing to cancel");
  command_failed(argv, r, fix);
}

void throw_if_refused(const char* tool, const ProcessResult& answer) {
  if (answer.exit_code == 127)
    throw failure(tool, "not found on this machine (" + std::string(trim(answer.err)) + ")",
                  "run hpclaunch on the cluster's login node, or use --dry-run to only render");
  if (answer.exit_code != 0) {
    std::string msg(trim(answer.err.empty() ? answer.out : answer.err));
    size_t nl = msg.find('\n');
    if (nl != std::string::npos) msg = msg.substr(0, nl) + " ...";
    throw failure(tool, "refused the job (exit " + std::to_string(answer.exit_code) + "): " + msg,
                  "fix what the scheduler names; nothing was submitted");
  }
}

}  // namespace hpclaunch
