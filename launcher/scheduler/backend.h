// One interface per scheduler for what runs its commands: submit a written job, ask its state, cancel it, name
// its output files, validate a script without submitting it, survey the cluster. Slurm (slurm.cc), PBS Pro
// (pbs.cc) and the local site (local.cc) implement it, chosen by the profile's `scheduler`; what the commands say
// and answer is the scheduler's dialect (dialect/NAME.h), beside it. Every scheduler command runs through an
// injected CommandRunner, so tests replay recorded answers.
#pragma once
#include <algorithm>
#include <functional>
#include <optional>
#include <string>
#include <vector>

#include "dialect/cluster.h"
#include "dialect/dialect.h"
#include "record/job_record.h"
#include "site/profile.h"
#include "util/command.h"
#include "util/error.h"

namespace hpclaunch {

using CommandRunner = std::function<ProcessResult(const std::vector<std::string>& argv)>;

// One job's state in query_many, or why that job (alone) has none.
struct JobAnswer {
  std::optional<JobState> state;
  std::string error;
};

class SchedulerBackend {
 public:
  virtual ~SchedulerBackend() = default;
  virtual Scheduler kind() const = 0;
  // What its commands say and answer: dialect_for(kind()) unless a backend brings its own.
  virtual const SchedulerDialect& dialect() const { return dialect_for(kind()); }

  // Hands the written script (JOBDIR/job.sh) to the scheduler, with `options` (dependency_options, ...) on the
  // submit command line, and returns the job id. Throws Error quoting the scheduler when it refuses. The local
  // backend only makes an id (run_in_foreground runs the job) and refuses options.
  virtual std::string submit(const std::string& script, const std::vector<std::string>& options,
                             const CommandRunner& run) const = 0;
  // Runs a submitted job here and returns its exit status (local site); nullopt for a batch scheduler.
  virtual std::optional<int> run_in_foreground(const std::string& script, const std::string& job_dir,
                                               const std::string& job_id) const;
  // Starts a submitted job here in the background and returns once it runs (local site, `submit --detach`; its
  // output only in the job directory); nothing for a batch scheduler, whose submit never waits for the job.
  virtual void start_detached(const std::string& script, const std::string& job_dir, const std::string& job_id) const;

  // The job's state. A scheduler that cannot be asked throws Error naming the command; a job it has forgotten
  // is finished_unknown, with what the job directory shows in `reason`. An array job's is summarize_tasks of
  // query_tasks; one task of it (task_record) is a job of its own.
  virtual JobState query(const JobRecord& job, const CommandRunner& run) const = 0;
  // How often `wait` and `logs --follow` ask for the job's state by default, in seconds (PollBackoff stretches it
  // while nothing changes): a scheduler's controller every 2 s, which many waiting users must not load; the local
  // site (local.cc), whose answer is a file of the job's own, sooner, so that a short job's end is seen at once.
  virtual double poll_interval() const { return 2.0; }
  // Every task's state of an array job, in task order: each task's query, unless the scheduler can say all at once.
  virtual std::vector<JobState> query_tasks(const JobRecord& array, const CommandRunner& run) const;
  // The states of many jobs at once (`hpclaunch jobs`: every job in view, once per refresh), in their order: each
  // job's query, unless the scheduler can say all at once (Slurm: one squeue, and one sacct for what squeue has
  // forgotten; PBS: one qstat). Throws Error naming the command when the scheduler cannot be asked; a job's own
  // trouble (its job directory gone, its state.json changed by hand) is that job's `error`.
  virtual std::vector<JobAnswer> query_many(const std::vector<JobRecord>& jobs, const CommandRunner& run) const;
  // What the scheduler's accounting says each job (or one task of an array) used, in their order, in one question.
  // The default: nothing recorded, each with a note naming the scheduler. A scheduler that cannot answer says
  // so in each job's `note`; it does not throw.
  virtual std::vector<JobUsage> usage(const std::vector<JobRecord>& jobs, const CommandRunner& run) const;
  // Cancels the job (an array job: all its tasks); throws Error naming the command when that fails.
  virtual void cancel(const JobRecord& job, const CommandRunner& run) const = 0;
  // Sends signal `number` (a warning: save, exit 99 and be requeued) to the job's script, which passes it on to
  // the job (`cancel --signal`). The default: an Error saying that this scheduler's jobs cannot be sent one here.
  virtual void send_signal(const JobRecord& job, int number) const;
  // The files the job's output goes to, most specific first.
  virtual std::vector<std::string> output_files(const JobRecord& job) const = 0;

  // Asks the scheduler whether it would take the script (nothing is queued); nullopt when it cannot tell.
  virtual std::optional<TestVerdict> test_only(const std::string& script, const std::vector<std::string>& options,
                                              const CommandRunner& run) const;

  // The dialect's array and dependency options (SchedulerDialect::array_options, dependency_options).
  virtual std::vector<std::string> array_options(int count, int max_concurrent) const {
    return dialect().array_options(count, max_concurrent);
  }
  virtual std::vector<std::string> dependency_options(const std::vector<Dependency>& after) const {
    return dialect().dependency_options(after);
  }

  // What the scheduler says about its cluster (partitions, nodes, the user's accounts and QOS). A command that
  // cannot run throws Error naming it; accounting that does not answer leaves accounts/qos unset. The default:
  // an Error saying that this scheduler cannot be asked.
  virtual ClusterInfo survey(const std::string& user, const CommandRunner& run) const;

  // From inside the running job `job_id`: puts it back in the queue so that its next run leaves out `exclude`
  // (every node to leave out, not only new ones). Throws Error naming the command when the scheduler refuses,
  // or saying that this scheduler cannot (the default).
  virtual void requeue_excluding(const std::string& job_id, const std::vector<std::string>& exclude,
                                 const CommandRunner& run) const;
};

// The backend of `scheduler`, from the registry (site/schedulers.h).
const SchedulerBackend& backend_for(Scheduler scheduler);
// Adds a scheduler at run time, as a scheduler folder does at build time (a test's toy scheduler):
// its name (profiles and job.json may then name it), its dialect and its backend; returns its id, which both
// return as kind(). Throws Error when the name is taken. Call it before anything asks the registry from another
// thread.
Scheduler register_scheduler(const std::string& name, const SchedulerDialect& dialect,
                             const SchedulerBackend& backend);
// The backends of the scheduler folders (launcher/schedulers/NAME/backend.cc defines NAME_backend()).
#define HPCLAUNCH_SCHEDULER(name, dialect, backend) const SchedulerBackend& backend();
#include "hpclaunch_schedulers.def"
#undef HPCLAUNCH_SCHEDULER

// The checks every backend makes before asking about a job: its directory is there and it was submitted.
void require_submitted(const JobRecord& job);

// The first step of a batched query (one squeue, qstat or flux jobs for many jobs): the ids every job lists
// (JobRecord::listed_ids), each once, in order. A job that cannot be asked (require_submitted) is left out, with
// its error in (*out)[i].error; `out` holds an answer (with an `error` field) per job.
template <class Answer>
std::vector<std::string> listed_ids_of(const std::vector<JobRecord>& jobs, std::vector<Answer>* out) {
  std::vector<std::string> ids;
  for (size_t i = 0; i < jobs.size(); ++i) {
    try {
      require_submitted(jobs[i]);
      for (const auto& id : jobs[i].listed_ids())
        if (std::find(ids.begin(), ids.end(), id) == ids.end()) ids.push_back(id);
    } catch (const Error& e) {
      (*out)[i].error = e.what();
    }
  }
  return ids;
}

// A job its scheduler has forgotten: finished, with what its job directory shows (k_no_output: nothing).
JobState forgotten_job(const std::vector<std::string>& outputs);
inline constexpr const char* k_no_output = "no output in the job directory";

// Runs one survey command, records it in `info`, and returns its output; a failure is command_failed with `fix`.
std::string ask_survey(const std::vector<std::string>& argv, const CommandRunner& run, ClusterInfo* info, const char* fix);

// Runs a cancel command (scancel, qdel). One that fails because the scheduler no longer knows the job says so
// ("nothing to cancel"); any other failure is command_failed with `fix`.
void run_cancel(const std::vector<std::string>& argv, const std::string& job_id,
                bool (*unknown_job)(const ProcessResult&), const std::string& fix, const CommandRunner& run);

}  // namespace hpclaunch
