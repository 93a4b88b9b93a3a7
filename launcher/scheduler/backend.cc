#include "scheduler/backend.h"

#include <filesystem>

#include "util/error.h"
#include "util/strings.h"

namespace hpclaunch {

namespace fs = std::filesystem;

std::optional<int> SchedulerBackend::run_in_foreground(const std::string&, const std::string&,
                                                       const std::string&) const {
  return std::nullopt;
}

void SchedulerBackend::start_detached(const std::string&, const std::string&, const std::string&) const {}

std::optional<TestVerdict> SchedulerBackend::test_only(const std::string&, const std::vector<std::string>&,
                                                       const CommandRunner&) const {
  return std::nullopt;
}

void SchedulerBackend::requeue_excluding(const std::string&, const std::vector<std::string>&,
                                         const CommandRunner&) const {
  throw failure(std::string("--requeue"), std::string(to_string(kind())) + " jobs cannot be requeued by hpclaunch",
                "resubmit the job without the bad nodes");
}

void SchedulerBackend::send_signal(const JobRecord& job, int) const {
  throw Error("--signal", std::string("hpclaunch sends no signal to ") + to_string(kind()) + " jobs",
              "on Slurm: scancel --signal=USR1 --batch " + job.job_id);
}

ClusterInfo SchedulerBackend::survey(const std::string&, const CommandRunner&) const {
  throw Error("sites check", "the " + std::string(to_string(kind())) + " site has no scheduler to ask",
              "check a site of " + schedulers_with(&SchedulerCapabilities::survey) + " on its login node");
}

std::vector<JobUsage> SchedulerBackend::usage(const std::vector<JobRecord>& jobs, const CommandRunner&) const {
  return std::vector<JobUsage>(jobs.size(), JobUsage{{}, "not recorded: hpclaunch asks " + std::string(to_string(kind())) +
                                                             " only for a job's state and exit code"});
}

std::vector<JobState> SchedulerBackend::query_tasks(const JobRecord& array, const CommandRunner& run) const {
  std::vector<JobState> out;
  for (int i = 0; i < array.array_tasks; ++i) {
    JobRecord task = task_record(array, i);
    if (!array.per_task()) task.job_id = dialect().task_job_id(array.job_id, i);  // this backend's spelling (a test's too)
    out.push_back(query(task, run));
  }
  return out;
}

std::vector<JobAnswer> SchedulerBackend::query_many(const std::vector<JobRecord>& jobs, const CommandRunner& run) const {
  std::vector<JobAnswer> out;
  for (const auto& job : jobs) {
    JobAnswer a;
    try {
      a.state = query(job, run);
    } catch (const Error& e) {
      a.error = e.what();
    }
    out.push_back(a);
  }
  return out;
}

namespace {

// Every scheduler's backend, by id: the scheduler folders', then the registered ones (register_scheduler).
std::vector<const SchedulerBackend*>& backends() {
  static std::vector<const SchedulerBackend*> known = {
#define HPCLAUNCH_SCHEDULER(name, dialect, backend) &backend(),
#include "hpclaunch_schedulers.def"
#undef HPCLAUNCH_SCHEDULER
  };
  return known;
}

}  // namespace

const SchedulerBackend& backend_for(Scheduler scheduler) {
  auto i = static_cast<size_t>(scheduler);
  if (i >= backends().size() || !backends()[i])  // a dialect registered alone, below this layer
    throw Error("scheduler", std::string(to_string(scheduler)) + " has no backend",
                "register it with register_scheduler");
  return *backends()[i];
}

Scheduler register_scheduler(const std::string& name, const SchedulerDialect& dialect,
                             const SchedulerBackend& backend) {
  Scheduler id = register_dialect(name, dialect);
  backends().resize(static_cast<size_t>(id));  // none for a dialect registered alone before it
  backends().push_back(&backend);
  return id;
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

std::string ask_survey(const std::vector<std::string>& argv, const CommandRunner& run, ClusterInfo* info, const char* fix) {
  ProcessResult r = run(argv);
  info->commands.push_back(join(argv, " "));
  if (r.exit_code != 0) command_failed(argv, r, fix);
  return r.out;
}

void run_cancel(const std::vector<std::string>& argv, const std::string& job_id,
                bool (*unknown_job)(const ProcessResult&), const std::string& fix, const CommandRunner& run) {
  ProcessResult r = run(argv);
  if (r.exit_code == 0) return;
  if (unknown_job(r))
    throw failure(argv[0], "job " + job_id + " is unknown to the scheduler (it has finished)", "nothing to cancel");
  command_failed(argv, r, fix);
}

}  // namespace hpclaunch
