// `hpclaunch status JOB`: the job's state from its scheduler (squeue/scontrol, qstat, or the local runner).
#include <fmt/core.h>

#include "cli/cli_util.h"
#include "record/job_record.h"
#include "scheduler/backend.h"
#include "submit/job_index.h"
#include "util/process.h"
#include "util/strings.h"

namespace hpclaunch {

int cmd_status(const Args& args) {
  CLI::App app("Print a job's state as its scheduler tells it.", "status");
  std::string ref;
  app.add_option("JOB", ref, "job id from `hpclaunch jobs`, or a job directory")->required();
  if (!parse_or_throw(app, args)) return 0;
  JobRecord job = resolve_job(ref, read_job_index());
  JobState state = backend_for(job.scheduler).query(job, run_capture);
  fmt::print("{} {}\n", job.job_id, describe(state));
  if (!job.after.empty()) fmt::print("  after: {}\n", join(job.after, ", "));
  for (const auto& n : job.excluded) fmt::print("  excluded: {} ({}; run {})\n", n.node, n.reason, n.run);
  return 0;
}

}  // namespace hpclaunch
