// `hpclaunch cancel JOB`: scancel, qdel, or SIGTERM to a local job's process group. An array job is cancelled
// whole; JOB_I (JOB[I]) cancels one task.
#include <fmt/core.h>

#include "cli/cli_util.h"
#include "cli/json_output.h"
#include "record/job_record.h"
#include "scheduler/backend.h"
#include "submit/job_index.h"
#include "util/command.h"

namespace hpclaunch {

int cmd_cancel(const Args& args) {
  CLI::App app("Cancel a job (scancel, qdel, or stop a local job).", "cancel");
  std::string ref;
  bool json = false;
  app.add_option("JOB", ref, "job id from `hpclaunch jobs`, or a job directory; JOB_I: task I of an array")->required();
  app.add_flag("--json", json, "print what was cancelled as JSON (docs/json.md)");
  if (!parse_or_throw(app, args)) return 0;
  JobRecord job = resolve_job(ref, read_job_index());
  backend_for(job.scheduler).cancel(job, run_capture);
  const char* what = job.is_array() ? "array job" : job.task ? "array task" : "job";
  fmt::print(stderr, "hpclaunch: asked {} to cancel {} {}\n", to_string(job.scheduler), what, job.job_id);
  if (json) fmt::print("{}\n", cancel_json(job, what).dump());
  return 0;
}

}  // namespace hpclaunch
