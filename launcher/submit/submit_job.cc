#include "submit/submit_job.h"

#include <fmt/core.h>

#include "submit/job_dir.h"
#include "submit/job_index.h"
#include "util/error.h"
#include "util/time_limit.h"

namespace hpclaunch {

std::vector<std::pair<std::string, std::string>> task_files(const LaunchPlan& plan, const std::string& dir) {
  std::vector<std::pair<std::string, std::string>> files;
  for (const auto& t : plan.array.tasks) {
    TaskFile f;
    f.task = t.index;
    for (const auto& [k, v] : t.values) f.values.push_back({k, v});
    f.command = task_command(plan.command, plan.array, t, task_dir(dir, t.index));
    for (const auto& [k, v] : task_env(t)) f.env.push_back({k, v});
    files.emplace_back("tasks/" + std::to_string(t.index) + "/task.json", nlohmann::json(f).dump(2) + "\n");
  }
  return files;
}

PlanFile plan_file(const LaunchPlan& p) {
  PlanFile f;
#define HPCLAUNCH_PLAN_COPY(type, name) f.name = p.name;
  HPCLAUNCH_PLAN_SAME_FIELDS(HPCLAUNCH_PLAN_COPY)
#undef HPCLAUNCH_PLAN_COPY
  f.site = p.site.name;
  f.site_file = p.site.file;
  f.scheduler = p.site.scheduler;
  f.launcher = p.launcher;
  f.world_size = p.nodes * p.workers_per_node;
  f.time_seconds = p.time_s;
  f.time = format_slurm_time(p.time_s);
  f.container = p.container_image;
  for (const auto& [k, v] : p.env) f.env.push_back({k, v});
  f.command = p.user_command;
  if (p.array.active()) f.array = {p.array.count(), p.array.max_concurrent, p.array.mode, p.array.keys};
  return f;
}

SubmittedJob submit_job(const LaunchPlan& plan, const std::string& script, const std::string& dir,
                        const SchedulerBackend& backend, const CommandRunner& run, const SubmitSteps& steps) {
  write_job_dir(dir, script, nlohmann::json(plan_file(plan)), task_files(plan, dir), steps.job_dir_mode, steps.fill);
  const std::string script_path = dir + "/job.sh";
  SubmissionFile sub;
  const std::vector<std::string> options = backend.dependency_options(steps.after);
  for (const auto& d : steps.after) sub.after.push_back(to_string(d));
  try {
    if (steps.validate)
      if (auto verdict = backend.test_only(script_path, options, run)) {
        if (steps.on_verdict) steps.on_verdict(*verdict);
        if (!verdict->accepted)
          throw failure("--check", "the scheduler would refuse the job: " + verdict->message,
                        "fix what the scheduler names; nothing was submitted");
      }
    sub.job_id = backend.submit(script_path, options, run);
  } catch (...) {
    remove_job_dir(dir);  // the scheduler has nothing: leave nothing behind either
    throw;
  }
  sub.scheduler = backend.kind();
  sub.site = plan.site.name;
  sub.job_dir = dir;
  sub.submitted_at = submitted_now();
  sub.nodes = plan.nodes;
  sub.snapshot = steps.snapshot;
  record_submission(dir, nlohmann::json(sub));
  std::string err;
  if (steps.list_in_index && !add_to_job_index(dir, &err))
    fmt::print(stderr, "hpclaunch: warning: job not listed in `hpclaunch jobs`: {}\n", err);
  SubmittedJob out{read_job_record(dir), std::nullopt};
  if (steps.on_submitted) steps.on_submitted(out.record);
  if (steps.detach) backend.start_detached(script_path, dir, sub.job_id);
  else out.exit_code = backend.run_in_foreground(script_path, dir, sub.job_id);
  return out;
}

}  // namespace hpclaunch
