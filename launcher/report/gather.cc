#include "report/gather.h"

#include <fmt/core.h>

#include <filesystem>

#include "jobs/metrics_location.h"
#include "jobs/output_file.h"
#include "plot/sweep_table.h"
#include "util/error.h"
#include "util/file.h"

namespace hpclaunch {

namespace {

namespace fs = std::filesystem;

// The directory that holds the job's plan.json and job.sh: a task's array's, any other job's own.
std::string plan_dir(const JobRecord& job) { return job.task ? job.array_dir : job.dir; }

void read_common(const JobRecord& job, JobState state, ReportFacts* f) {
  f->job_id = job.job_id;
  f->job_dir = job.dir;
  f->site = job.site;
  f->scheduler = to_string(job.scheduler);
  f->submitted_at = job.submitted_at;
  f->snapshot = job.snapshot;
  f->state = std::move(state);
  f->plan = read_plan_file(plan_dir(job));
  f->script = read_file((fs::path(plan_dir(job)) / "job.sh").string()).value_or("");
  f->usage = {{"state", describe(f->state)}};
  if (f->state.exit_code) f->usage.emplace_back("exit code", std::to_string(*f->state.exit_code));
  f->usage_note = "not recorded: hpclaunch asks " + f->scheduler + " only for a job's state and exit code; its "
                  "accounting (elapsed time, memory, energy) is not read";
}

// The job's curves as they stand: a job still running may be writing its last line, which is left for later.
void read_curves(const JobRecord& job, const std::string& cwd, ReportFacts* f) {
  f->metrics_file = metrics_path(job, cwd);
  std::optional<std::string> text = read_file(f->metrics_file);
  if (!text) {
    f->metrics_note = "no metrics file yet: " + f->metrics_file;
    return;
  }
  if (!f->state.finished() && !text->empty() && text->back() != '\n') text->erase(text->rfind('\n') + 1);
  try {
    f->curves = parse_run_curves(*text, f->metrics_file);
  } catch (const Error& e) {
    f->metrics_note = std::string("the curves are left out: ") + e.what();
  }
}

std::optional<Failure> read_failure(const std::string& dir) {
  std::optional<std::string> text = read_file((fs::path(dir) / "failure.json").string());
  return text ? parse_failure_record(*text) : std::nullopt;  // a file being written says nothing yet
}

}  // namespace

ReportFacts gather_report(const JobRecord& job, const std::string& cwd, const CommandRunner& run,
                          std::optional<JobState> state) {
  ReportFacts f;
  if (!state && job.submitted) state = backend_for(job.scheduler).query(job, run);
  if (!state) state = JobState{Phase::pending, "never submitted", "", std::nullopt, false};
  read_common(job, std::move(*state), &f);
  read_curves(job, cwd, &f);
  const std::optional<Failure> failure = read_failure(plan_dir(job));
  f.excluded = job.excluded;
  f.timeline = make_timeline(f.curves ? f.curves->runs : std::vector<RunSpan>{}, job.hangs, job.replaced, job.excluded,
                             failure, f.state);
  f.output_file = existing_output(job);
  if (!f.output_file.empty())
    f.ranks = rank_facts(read_file(f.output_file).value_or(""), k_report_rank_lines, failure, f.state);
  const std::string preflight = (fs::path(plan_dir(job)) / "preflight.json").string();
  if (std::optional<std::string> text = read_file(preflight)) f.preflight = parse_preflight(*text, preflight);
  return f;
}

ReportFacts gather_array_report(const JobRecord& array, const std::string& cwd, const CommandRunner& run) {
  ReportFacts f;
  std::vector<JobState> states;
  if (array.submitted) states = backend_for(array.scheduler).query_tasks(array, run);
  read_common(array, array.submitted ? summarize_tasks(states) : JobState{}, &f);
  for (int i = 0; i < array.array_tasks; ++i) {
    JobRecord task = task_record(array, i);
    if (i == 0)
      for (const auto& v : task.values) f.keys.push_back(v.key);
    TaskFacts t{i, task.job_id, task_label(task), {}, task.values, std::nullopt, -1,
                fmt::format("tasks/{}/report.html", i)};
    if (static_cast<size_t>(i) < states.size()) t.state = states[static_cast<size_t>(i)];
    std::optional<std::string> text = read_file(metrics_path(task, cwd));
    if (text && !text->empty()) {
      if (text->back() != '\n') text->erase(text->rfind('\n') + 1);  // a line being written
      try {
        RunCurves curves = parse_run_curves(*text, metrics_path(task, cwd));
        t.best_validation = best_validation(curves);
        const Curve* loss = curves.curve("loss");
        t.steps = loss && !loss->points.empty() ? loss->points.back().step : 0;
      } catch (const Error&) {
        t.steps = 0;  // unreadable yet: its own page says why
      }
    }
    f.tasks.push_back(std::move(t));
  }
  return f;
}

}  // namespace hpclaunch
