// `hpclaunch status JOB`: the job's state from its scheduler (squeue/scontrol, qstat, or the local runner); an
// array's counts per state and each task's state.
#include <fmt/core.h>

#include "cli/cli_util.h"
#include "cli/json_output.h"
#include "record/job_record.h"
#include "scheduler/backend.h"
#include "submit/job_index.h"
#include "util/command.h"
#include "util/strings.h"

namespace hpclaunch {

int cmd_status(const Args& args) {
  CLI::App app("Print a job's state as its scheduler tells it.", "status");
  std::string ref;
  app.add_option("JOB", ref, "job id from `hpclaunch jobs`, or a job directory; JOB_I: task I of an array")->required();
  bool json = false;
  app.add_flag("--json", json, "print the state as JSON (docs/json.md)");
  if (!parse_or_throw(app, args)) return 0;
  JobRecord job = resolve_job(ref, read_job_index());
  const SchedulerBackend& backend = backend_for(job.scheduler);
  if (json) return print_status_json(job, backend);
  if (job.is_array()) {
    // The array's counts, then a line per task: its scheduler id, state and values.
    std::vector<JobState> tasks = backend.query_tasks(job, run_capture);
    fmt::print("{} {}\n", job.job_id, describe(summarize_tasks(tasks)));
    for (size_t i = 0; i < tasks.size(); ++i) {
      JobRecord task = task_record(job, static_cast<int>(i));
      fmt::print("  {:<16} {:<40} {}\n", task.job_id, describe(tasks[i]), task_label(task));
    }
  } else {
    fmt::print("{} {}\n", job.job_id, describe(backend.query(job, run_capture)));
  }
  if (!job.after.empty()) fmt::print("  after: {}\n", join(job.after, ", "));
  for (const auto& n : job.excluded) fmt::print("  excluded: {} ({}; run {})\n", n.node, n.reason, n.run);
  return 0;
}

}  // namespace hpclaunch
