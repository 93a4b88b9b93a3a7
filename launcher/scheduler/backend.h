// One interface per scheduler: submit a written job, ask its state, cancel it, name its output files, validate a
// script without submitting it, and spell arrays and dependencies. Slurm (slurm.cc), PBS Pro (pbs.cc) and the
// local site (local.cc) implement it, chosen by the profile's `scheduler`; adding LSF or Flux is one new file.
// Every scheduler command runs through an injected CommandRunner, so tests replay recorded answers.
#pragma once
#include <functional>
#include <optional>
#include <string>
#include <vector>

#include "record/job_record.h"
#include "scheduler/job_state.h"
#include "site/profile.h"
#include "util/process.h"

namespace hpclaunch {

using CommandRunner = std::function<ProcessResult(const std::vector<std::string>& argv)>;

// What a scheduler says of a script it was asked to check without queueing it (sbatch --test-only).
struct TestVerdict {
  bool accepted = false;
  std::string message;  // the scheduler's own words, one line
};

// `--after JOB[:ok|any|notok]`.
enum class DependencyKind { ok, any, notok };
struct Dependency {
  std::string job_id;
  DependencyKind kind = DependencyKind::ok;
};

class SchedulerBackend {
 public:
  virtual ~SchedulerBackend() = default;
  virtual Scheduler kind() const = 0;

  // Hands the written script (JOBDIR/job.sh) to the scheduler, with `options` (dependency_options, ...) on the
  // submit command line, and returns the job id. Throws Error quoting the scheduler when it refuses. The local
  // backend only makes an id (run_in_foreground runs the job) and refuses options.
  virtual std::string submit(const std::string& script, const std::vector<std::string>& options,
                             const CommandRunner& run) const = 0;
  // Runs a submitted job here and returns its exit status (local site); nullopt for a batch scheduler.
  virtual std::optional<int> run_in_foreground(const std::string& script, const std::string& job_dir,
                                               const std::string& job_id) const;

  // The job's state. A scheduler that cannot be asked throws Error naming the command; a job it has forgotten
  // is finished_unknown, with what the job directory shows in `reason`. An array job's is summarize_tasks of
  // query_tasks; one task of it (task_record) is a job of its own.
  virtual JobState query(const JobRecord& job, const CommandRunner& run) const = 0;
  // Every task's state of an array job, in task order: each task's query, unless the scheduler can say all at once.
  virtual std::vector<JobState> query_tasks(const JobRecord& array, const CommandRunner& run) const;
  // Cancels the job (an array job: all its tasks); throws Error naming the command when that fails.
  virtual void cancel(const JobRecord& job, const CommandRunner& run) const = 0;
  // The files the job's output goes to, most specific first.
  virtual std::vector<std::string> output_files(const JobRecord& job) const = 0;

  // Asks the scheduler whether it would take the script (nothing is queued); nullopt when it cannot tell.
  virtual std::optional<TestVerdict> test_only(const std::string& script, const std::vector<std::string>& options,
                                              const CommandRunner& run) const;
  // Whether test_only can tell at all.
  virtual bool has_test_only() const { return false; }

  // The directive options asking for tasks 0..count-1 with at most max_concurrent at once (0: no limit), and
  // those holding a job until `after` are done; empty when the scheduler has none (the local runner reads an
  // array's count and limit from plan.json).
  virtual std::vector<std::string> array_options(int count, int max_concurrent) const = 0;
  virtual std::vector<std::string> dependency_options(const std::vector<Dependency>& after) const = 0;

  // From inside the running job `job_id`: puts it back in the queue so that its next run leaves out `exclude`
  // (every node to leave out, not only new ones). Throws Error naming the command when the scheduler refuses,
  // or saying that this scheduler cannot (the default).
  virtual void requeue_excluding(const std::string& job_id, const std::vector<std::string>& exclude,
                                 const CommandRunner& run) const;
};

// `--after` values: "JOB", "JOB:ok", "JOB:any", "JOB:notok". Throws Error naming --after otherwise.
Dependency parse_dependency(const std::string& text);
std::string to_string(const Dependency& d);  // "afterok:123"

// The backend of `scheduler`.
const SchedulerBackend& backend_for(Scheduler scheduler);

// The checks every backend makes before asking about a job: its directory is there and it was submitted.
void require_submitted(const JobRecord& job);

// A job its scheduler has forgotten: finished, with what its job directory shows (k_no_output: nothing).
JobState forgotten_job(const std::vector<std::string>& outputs);
inline constexpr const char* k_no_output = "no output in the job directory";

// Throws the Error for a scheduler command that failed: "ARGV: not found on this machine" or "failed (exit N):
// first line of its complaint", with `fix`.
[[noreturn]] void command_failed(const std::vector<std::string>& argv, const ProcessResult& r, const std::string& fix);

// Runs a cancel command (scancel, qdel). One that fails because the scheduler no longer knows the job says so
// ("nothing to cancel"); any other failure is command_failed with `fix`.
void run_cancel(const std::vector<std::string>& argv, const std::string& job_id,
                bool (*unknown_job)(const ProcessResult&), const std::string& fix, const CommandRunner& run);

// Throws the Error for a submit command (sbatch, qsub) that was not found or refused the job, in its own words.
void throw_if_refused(const char* tool, const ProcessResult& answer);

// "afterok:1:2,afterany:3": the list Slurm's --dependency= and PBS's -W depend= both take (',' is AND).
std::string dependency_list(const std::vector<Dependency>& after);

// The first non-empty line of a command's stderr (or stdout).
std::string first_line(const ProcessResult& r);

}  // namespace hpclaunch
