// `hpclaunch cancel JOB`: scancel, qdel, or SIGTERM to a local job's process group. An array job is cancelled
// whole; JOB_I (JOB[I]) cancels one task. `--signal SIG` sends a warning instead, as `scancel --signal --batch`.
#include <fmt/core.h>

#include "cli/cli_util.h"
#include "cli/json_output.h"
#include "record/job_record.h"
#include "scheduler/backend.h"
#include "submit/job_index.h"
#include "util/command.h"
#include "util/error.h"
#include "util/warning_signal.h"

namespace hpclaunch {

int cmd_cancel(const Args& args) {
  CLI::App app("Cancel a job (scancel, qdel, or stop a local job).", "cancel");
  std::string ref;
  bool json = false;
  app.add_option("JOB", ref, "job id from `hpclaunch jobs`, or a job directory; JOB_I: task I of an array")->required();
  app.add_flag("--json", json, "print what was cancelled as JSON (docs/json.md)");
  std::string signal;
  app.add_option("--signal", signal,
                 "send this signal (USR1) to the job's script instead: the warning a job submitted with --requeue "
                 "saves on (local site)")
      ->excludes("--json");
  if (!parse_or_throw(app, args)) return 0;
  JobRecord job = resolve_job(ref, read_job_index());
  const char* what = job.is_array() ? "array job" : job.task ? "array task" : "job";
  if (!signal.empty()) {
    int number = 0;
    std::string err;
    if (!parse_catchable_signal(signal, &number, &err)) throw Error("--signal", err, "write e.g. --signal USR1");
    backend_for(job.scheduler).send_signal(job, number);
    fmt::print(stderr, "hpclaunch: sent signal {} to {} {}\n", signal, what, job.job_id);
    return 0;
  }
  backend_for(job.scheduler).cancel(job, run_capture);
  fmt::print(stderr, "hpclaunch: asked {} to cancel {} {}\n", to_string(job.scheduler), what, job.job_id);
  if (json) fmt::print("{}\n", cancel_json(job, what).dump());
  return 0;
}

}  // namespace hpclaunch
