// Renders a LaunchPlan into a batch script from its scheduler's template (launcher/schedulers/NAME/NAME.sh.mustache, mustache). Every user string
// reaches the script shell-quoted, so the program receives exactly the bytes the user typed. Pure.
#pragma once
#include <string>
#include <vector>

#include "dialect/dialect.h"
#include "plan/plan.h"

namespace hpclaunch {

struct RenderContext {
  std::string hpclaunch;  // absolute path of the hpclaunch binary the job runs
  std::string workdir;    // where the job starts (the submission directory, or its copy in the snapshot)
  std::string job_dir;    // where the script, plan and logs live
  // An array job's directives from its scheduler's dialect (SchedulerDialect::array_options: `--array=0-3%2`,
  // `-J 0-3%2`); the local site has none.
  std::vector<std::string> array_directives;
  // `workdir` is in the job's snapshot (submit --snapshot): a scheduler that would start the job where it was
  // submitted (PBS's $PBS_O_WORKDIR) starts it there instead.
  bool snapshot = false;
};

// The template file for a scheduler, e.g. "launcher/schedulers/slurm/slurm.sh.mustache".
std::string template_path(Scheduler s);

// The script in the dialect of the plan's scheduler, or in `dialect` (a scheduler of a test's own).
std::string render_script(const LaunchPlan& plan, const RenderContext& ctx);
std::string render_script(const LaunchPlan& plan, const RenderContext& ctx, const SchedulerDialect& dialect);

}  // namespace hpclaunch
