#include "submit/task_jobs.h"

#include <fmt/core.h>

#include <filesystem>

#include "util/error.h"
#include "util/strings.h"

namespace hpclaunch {

LaunchPlan task_plan(const LaunchPlan& array_plan, size_t i, const std::string& dir) {
  const ArrayPlan& a = array_plan.array;
  const ArrayTask& t = a.tasks.at(i);
  LaunchPlan p = array_plan;
  p.command = task_command(array_plan.command, a, t, dir);
  for (const auto& kv : task_env(t)) p.env.push_back(kv);
  p.job_name = fmt::format("{}-{}", array_plan.job_name, t.index);
  p.array = ArrayPlan{};
  return p;
}

std::optional<size_t> task_waits_for(size_t i, int max_concurrent) {
  if (max_concurrent <= 0 || i < static_cast<size_t>(max_concurrent)) return std::nullopt;
  return i - static_cast<size_t>(max_concurrent);
}

std::string render_task_jobs(const LaunchPlan& array_plan, const std::string& dir, const RenderContext& base) {
  std::string out;
  for (size_t i = 0; i < array_plan.array.tasks.size(); ++i) {
    const std::string task = task_dir(dir, array_plan.array.tasks[i].index);
    RenderContext ctx{base.hpclaunch, base.workdir, task, {}};
    std::string after;
    if (auto w = task_waits_for(i, array_plan.array.max_concurrent))
      after = fmt::format(" (submitted after task {}'s job, to start once it ends)", array_plan.array.tasks[*w].index);
    out += fmt::format("# {}/job.sh{}\n", task, after) + render_script(task_plan(array_plan, i, task), ctx);
  }
  return out;
}

std::vector<std::string> submit_task_jobs(const LaunchPlan& array_plan, const std::string& dir, const RenderContext& base,
                                          const SchedulerBackend& backend, const CommandRunner& run,
                                          const SubmitSteps& steps, const TaskSubmitted& on_task) {
  std::filesystem::create_directories(dir + "/tasks");
  std::vector<std::string> ids;
  for (size_t i = 0; i < array_plan.array.tasks.size(); ++i) {
    const int index = array_plan.array.tasks[i].index;
    const std::string task = task_dir(dir, index);
    SubmitSteps task_steps = steps;
    if (auto w = task_waits_for(i, array_plan.array.max_concurrent))
      task_steps.after.push_back({ids.at(*w), DependencyKind::any});
    LaunchPlan plan = task_plan(array_plan, i, task);
    try {
      SubmittedJob job = submit_job(plan, render_script(plan, {base.hpclaunch, base.workdir, task, {}}), task, backend,
                                    run, task_steps);
      ids.push_back(job.record.job_id);
    } catch (const Error& e) {
      if (ids.empty()) throw;
      throw failure("submit", fmt::format("task {} was refused ({}); tasks before it were submitted as jobs {}", index,
                                          e.what(), join(ids, " ")),
                    "cancel them with `hpclaunch cancel ID`, or submit the remaining tasks again");
    }
    if (on_task) on_task(index, ids.back(), task);
  }
  return ids;
}

}  // namespace hpclaunch
