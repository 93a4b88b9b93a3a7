// An array (--array/--sweep) on a site that refuses its scheduler's job arrays (the profile's `arrays: false`;
// NCI Gadi): each task is submitted as a job of its own, in JOBDIR/tasks/I (each a whole job directory), and
// --max-concurrent M chains them: task I waits for task I-M to end (afterany). JOBDIR itself holds the array's
// plan.json, each task's task.json and a job.json naming every task's job (task_job_ids), so that `status`, `wait`,
// `logs --task`, `plot` and `cancel` take the array as they take a scheduler's array job; `jobs` lists it once.
#pragma once
#include <functional>
#include <optional>
#include <string>
#include <vector>

#include "plan/plan.h"
#include "render/render.h"
#include "scheduler/backend.h"
#include "submit/submit_job.h"

namespace hpclaunch {

// Task `i` of `array_plan` as a single job whose directory is `dir`: the task's command (its values put in, as
// the array's `case` would), its sweep variables in the environment, the job named NAME-I. Pure.
LaunchPlan task_plan(const LaunchPlan& array_plan, size_t i, const std::string& dir);

// The task whose job task `i` waits for: i - max_concurrent, or none (no limit, or one of the first M). Pure.
std::optional<size_t> task_waits_for(size_t i, int max_concurrent);

// Every task's script as `submit` would write it (render and --dry-run), each after a `# tasks/I/job.sh` line.
std::string render_task_jobs(const LaunchPlan& array_plan, const std::string& dir, const RenderContext& base);

// Submits every task of `array_plan` as a job of its own under `dir` (reserved, empty), in order, each with
// `steps.after` and its chain dependency; `on_task` hears of each (its index, job id and directory) once it is
// submitted. A refused task stops there, naming the tasks already submitted (JOBDIR's job.json names those).
// Returns the job ids, in task order.
using TaskSubmitted = std::function<void(int index, const std::string& job_id, const std::string& dir)>;
std::vector<std::string> submit_task_jobs(const LaunchPlan& array_plan, const std::string& dir, const RenderContext& base,
                                          const SchedulerBackend& backend, const CommandRunner& run,
                                          const SubmitSteps& steps, const TaskSubmitted& on_task = {});

}  // namespace hpclaunch
