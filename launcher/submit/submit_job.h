// Submitting a planned job: write its directory, hand it to the scheduler's backend, record the job id (job.json)
// and list it in the job index. The one path every `hpclaunch submit` takes, whatever the scheduler.
#pragma once
#include <sys/types.h>

#include <optional>
#include <string>

#include "plan/plan.h"
#include "record/job_record.h"
#include "scheduler/backend.h"

namespace hpclaunch {

struct SubmittedJob {
  JobRecord record;
  std::optional<int> exit_code;  // the job's exit status when the backend ran it here (local site)
};

struct SubmitSteps {
  // Ask the scheduler to validate the written script first (sbatch --test-only); a refusal stops the submission.
  bool validate = false;
  // Runs once the job has an id, before a local job starts running (to tell the user where it is).
  std::function<void(const JobRecord&)> on_submitted;
  // Gets the scheduler's verdict on the validation, accepted or not.
  std::function<void(const TestVerdict&)> on_verdict;
  // Start only once these jobs have ended so (--after); given to the scheduler on its submit command line.
  std::vector<Dependency> after;
  // The job directory's mode (--job-dir-mode): the owner's only by default.
  mode_t job_dir_mode = 0700;
  // A job that runs here (local site) starts in the background, and submit_job returns once it runs (--detach).
  bool detach = false;
  // List the job in the job index (`hpclaunch jobs`); a task submitted as a job of its own is listed by its array.
  bool list_in_index = true;
  // Puts more into the job directory (given the temporary folder that becomes it): the snapshot.
  std::function<void(const std::string&)> fill;
  // job.json's snapshot (submit --snapshot).
  std::optional<SnapshotRecord> snapshot;
};

// The plan as JOBDIR/plan.json holds it.
PlanFile plan_file(const LaunchPlan& plan);
// tasks/I/task.json of every task of an array job (its values, command and environment), as (path under the job
// directory, text); nothing for a single job.
std::vector<std::pair<std::string, std::string>> task_files(const LaunchPlan& plan, const std::string& dir);

// Writes `dir` (absent, or empty as reserve_job_dir left it; job.sh = `script`, plan.json), submits it through `backend` and records job.json and the index
// entry. A refused validation or submission removes the directory again and throws the scheduler's words.
SubmittedJob submit_job(const LaunchPlan& plan, const std::string& script, const std::string& dir,
                        const SchedulerBackend& backend, const CommandRunner& run, const SubmitSteps& steps = {});

}  // namespace hpclaunch
