// `hpclaunch cancel JOB`: scancel, qdel, or SIGTERM to a local job's process group.
#include <fmt/core.h>

#include "cli/cli_util.h"
#include "record/job_record.h"
#include "scheduler/backend.h"
#include "submit/job_index.h"
#include "util/process.h"

namespace hpclaunch {

int cmd_cancel(const Args& args) {
  CLI::App app("Cancel a job (scancel, qdel, or stop a local job).", "cancel");
  std::string ref;
  app.add_option("JOB", ref, "job id from `hpclaunch jobs`, or a job directory")->required();
  if (!parse_or_throw(app, args)) return 0;
  JobRecord job = resolve_job(ref, read_job_index());
  backend_for(job.scheduler).cancel(job, run_capture);
  fmt::print(stderr, "hpclaunch: asked {} to cancel job {}\n", to_string(job.scheduler), job.job_id);
  return 0;
}

}  // namespace hpclaunch
