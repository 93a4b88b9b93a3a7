#include "submit/task_jobs.h"

#include <fmt/core.h>

#include <filesystem>

#include "submit/job_dir.h"
#include "submit/job_index.h"
#include "util/error.h"
#include "util/file.h"
#include "util/strings.h"

namespace hpclaunch {

LaunchPlan task_plan(const LaunchPlan& array_plan, size_t i, const std::string& dir) {
  const ArrayPlan& a = array_plan.array;
  const ArrayTask& t = a.tasks.at(i);
  LaunchPlan p = array_plan;
  p.command = task_command(array_plan.command, a, t, dir);
  for (const auto& kv : task_env(t)) p.env.push_back(kv);
  // Its place in the sweep, as an array task's script exports it (render's array_lines): the index, the count and
  // the array's job directory (`dir` is its tasks/I).
  p.env.emplace_back("HPCLAUNCH_ARRAY_TASK", std::to_string(t.index));
  p.env.emplace_back("HPCLAUNCH_ARRAY_TASKS", std::to_string(a.count()));
  p.env.emplace_back("HPCLAUNCH_ARRAY_DIR", std::filesystem::path(dir).parent_path().parent_path().string());
  p.job_name = fmt::format("{}-{}", array_plan.job_name, t.index);
  p.array = ArrayPlan{};
  return p;
}

std::optional<size_t> task_waits_for(size_t i, int max_concurrent) {
  if (max_concurrent <= 0 || i < static_cast<size_t>(max_concurrent)) return std::nullopt;
  return i - static_cast<size_t>(max_concurrent);
}

namespace {

// A task's job: the array's context in the task's directory, without array directives.
RenderContext task_context(const RenderContext& base, const std::string& task_dir) {
  RenderContext ctx = base;
  ctx.job_dir = task_dir;
  ctx.array_directives.clear();
  return ctx;
}

}  // namespace

std::string render_task_jobs(const LaunchPlan& array_plan, const std::string& dir, const RenderContext& base) {
  std::string out;
  for (size_t i = 0; i < array_plan.array.tasks.size(); ++i) {
    const std::string task = task_dir(dir, array_plan.array.tasks[i].index);
    RenderContext ctx = task_context(base, task);
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
  namespace fs = std::filesystem;
  fs::create_directories(dir + "/tasks");
  // The array's own record, as an array job's directory has it: plan.json now, each task's task.json once its
  // directory is written, job.json with the tasks' ids once they are submitted (those before a refusal too).
  const std::string plan_path = dir + "/plan.json";
  if (!write_file_atomic(plan_path, nlohmann::json(plan_file(array_plan)).dump(2) + "\n", 0644))
    throw failure(plan_path, "cannot be written", "check the job directory's permissions and free space");
  const auto task_texts = task_files(array_plan, dir);
  std::vector<std::string> ids;
  auto record_array = [&] {
    if (ids.empty()) return;
    SubmissionFile sub;
    sub.job_id = ids.front();
    sub.task_job_ids = ids;
    sub.scheduler = backend.kind();
    sub.site = array_plan.site.name;
    sub.job_dir = dir;
    sub.submitted_at = submitted_now();
    sub.nodes = array_plan.nodes;
    sub.snapshot = steps.snapshot;
    for (const auto& d : steps.after) sub.after.push_back(to_string(d));
    record_submission(dir, nlohmann::json(sub));
    std::string err;
    if (!add_to_job_index(dir, &err))
      fmt::print(stderr, "hpclaunch: warning: job not listed in `hpclaunch jobs`: {}\n", err);
  };
  for (size_t i = 0; i < array_plan.array.tasks.size(); ++i) {
    const int index = array_plan.array.tasks[i].index;
    const std::string task = task_dir(dir, index);
    SubmitSteps task_steps = steps;
    task_steps.list_in_index = false;  // the array's directory is listed, once
    task_steps.fill = {};  // the array's directory holds the snapshot, once
    if (auto w = task_waits_for(i, array_plan.array.max_concurrent))
      task_steps.after.push_back({ids.at(*w), DependencyKind::any});
    LaunchPlan plan = task_plan(array_plan, i, task);
    try {
      SubmittedJob job = submit_job(plan, render_script(plan, task_context(base, task)), task, backend,
                                    run, task_steps);
      ids.push_back(job.record.job_id);
      const auto& [name, text] = task_texts.at(i);
      if (!write_file_atomic(dir + "/" + name, text, 0644))
        fmt::print(stderr, "hpclaunch: warning: {}/{} could not be written\n", dir, name);
    } catch (const Error& e) {
      if (ids.empty()) {
        remove_job_dir(dir);  // nothing was submitted: nothing is left behind either
        throw;
      }
      record_array();
      throw failure("submit", fmt::format("task {} was refused ({}); tasks before it were submitted as jobs {}", index,
                                          e.what(), join(ids, " ")),
                    "cancel them with `hpclaunch cancel ID`, or submit the remaining tasks again");
    }
    if (on_task) on_task(index, ids.back(), task);
  }
  record_array();
  return ids;
}

}  // namespace hpclaunch
