#include "submit/submit_job.h"

#include <fmt/core.h>

#include "submit/job_dir.h"
#include "submit/job_index.h"

namespace hpclaunch {

SubmittedJob submit_job(const LaunchPlan& plan, const std::string& script, const std::string& dir,
                        const SchedulerBackend& backend, const CommandRunner& run,
                        const std::function<void(const JobRecord&)>& on_submitted) {
  write_job_dir(dir, script, plan_to_json(plan));
  const std::string script_path = dir + "/job.sh";
  SubmissionFile sub;
  try {
    sub.job_id = backend.submit(script_path, run);
  } catch (...) {
    remove_job_dir(dir);  // the scheduler has nothing: leave nothing behind either
    throw;
  }
  sub.scheduler = backend.kind();
  sub.site = plan.site.name;
  sub.job_dir = dir;
  sub.submitted_at = timestamp_now();
  sub.nodes = plan.nodes;
  record_submission(dir, nlohmann::json(sub));
  std::string err;
  if (!add_to_job_index(dir, &err))
    fmt::print(stderr, "hpclaunch: warning: job not listed in `hpclaunch jobs`: {}\n", err);
  SubmittedJob out{read_job_record(dir), std::nullopt};
  if (on_submitted) on_submitted(out.record);
  out.exit_code = backend.run_in_foreground(script_path, dir, sub.job_id);
  return out;
}

}  // namespace hpclaunch
