// Submitting a planned job: write its directory, hand it to the scheduler's backend, record the job id (job.json)
// and list it in the job index. The one path every `hpclaunch submit` takes, whatever the scheduler.
#pragma once
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

// Writes `dir` (job.sh = `script`, plan.json), submits it through `backend` and records job.json and the index
// entry. A refused submission removes the directory again and rethrows the scheduler's words. `on_submitted`
// runs once the job has an id, before a local job starts running (to tell the user where it is).
SubmittedJob submit_job(const LaunchPlan& plan, const std::string& script, const std::string& dir,
                        const SchedulerBackend& backend, const CommandRunner& run,
                        const std::function<void(const JobRecord&)>& on_submitted = {});

}  // namespace hpclaunch
