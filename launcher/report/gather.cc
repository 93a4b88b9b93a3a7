#include "report/gather.h"

#include <fmt/core.h>

#include <algorithm>
#include <atomic>
#include <exception>
#include <filesystem>
#include <functional>
#include <thread>

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

// What a job's page reads from its plan directory: an array's tasks share their array's, read once for all of them.
struct PlanDirFacts {
  std::optional<PlanFile> plan;
  std::string script;
  std::optional<Failure> failure;             // failure.json's; nullopt: none
  std::optional<PreflightReport> preflight;   // nullopt: no preflight.json
};

std::optional<Failure> read_failure(const std::string& dir) {
  std::optional<std::string> text = read_file((fs::path(dir) / "failure.json").string());
  return text ? parse_failure_record(*text) : std::nullopt;  // a file being written says nothing yet
}

// The plan and script; `all`: the failure and preflight too (a job's own page shows them, an array's does not).
PlanDirFacts read_plan_dir(const std::string& dir, bool all) {
  PlanDirFacts d{read_plan_file(dir), read_file((fs::path(dir) / "job.sh").string()).value_or(""), std::nullopt,
                 std::nullopt};
  if (!all) return d;
  d.failure = read_failure(dir);
  const std::string preflight = (fs::path(dir) / "preflight.json").string();
  if (std::optional<std::string> text = read_file(preflight)) d.preflight = parse_preflight(*text, preflight);
  return d;
}

void read_common(const JobRecord& job, JobState state, const PlanDirFacts& dir, ReportFacts* f) {
  f->job_id = job.job_id;
  f->job_dir = job.dir;
  f->site = job.site;
  f->scheduler = to_string(job.scheduler);
  f->submitted_at = job.submitted_at;
  f->snapshot = job.snapshot;
  f->state = std::move(state);
  f->plan = dir.plan;
  f->script = dir.script;
  f->usage = {{"state", describe(f->state)}};
  if (f->state.exit_code) f->usage.emplace_back("exit code", std::to_string(*f->state.exit_code));
}

// What the scheduler's accounting says, after the state and exit code.
void add_usage(const JobUsage& usage, ReportFacts* f) {
  f->usage.insert(f->usage.end(), usage.items.begin(), usage.items.end());
  f->usage_note = usage.note;
}

// The job's curves as they stand (the one rule, for a job and for an array's tasks): a job still running may be
// writing its last line, which is left for later; a finished job's cut line is an error the page shows.
void read_curves(const JobRecord& job, const std::string& cwd, ReportFacts* f) {
  f->metrics_file = metrics_path(job, cwd);
  std::optional<std::string> text = read_file(f->metrics_file);
  if (!text) {
    f->metrics_note = "no metrics file yet: " + f->metrics_file;
    return;
  }
  f->metrics_found = !text->empty();
  if (!f->state.finished() && !text->empty() && text->back() != '\n') text->erase(text->rfind('\n') + 1);
  try {
    f->curves = parse_run_curves(*text, f->metrics_file);
  } catch (const Error& e) {
    f->metrics_note = std::string("the curves are left out: ") + e.what();
  }
}

// How many threads read (and draw) an array's tasks: one a core, up to k_report_threads.
size_t report_threads(size_t tasks) {
  const size_t cores = std::max(1u, std::thread::hardware_concurrency());
  return std::max<size_t>(1, std::min({cores, k_report_threads, tasks}));
}

// work(0) .. work(n - 1), each once, on `threads` threads (this one among them). Once one throws no other is begun;
// the lowest index's exception is rethrown when all have stopped, so the error does not depend on the timing.
void for_each_index(size_t n, size_t threads, const std::function<void(size_t)>& work) {
  std::vector<std::exception_ptr> errors(n);
  std::atomic<size_t> next{0};
  std::atomic<bool> failed{false};
  auto worker = [&] {
    for (size_t i; !failed && (i = next++) < n;) {
      try {
        work(i);
      } catch (...) {
        errors[i] = std::current_exception();
        failed = true;
      }
    }
  };
  std::vector<std::thread> others;
  for (size_t t = 1; t < threads; ++t) others.emplace_back(worker);
  worker();
  for (auto& t : others) t.join();
  for (const auto& e : errors)
    if (e) std::rethrow_exception(e);
}

// gather_report with the plan directory's files already read.
ReportFacts gather_job(const JobRecord& job, const std::string& cwd, const CommandRunner& run,
                       std::optional<JobState> state, std::optional<JobUsage> usage, const PlanDirFacts& dir) {
  ReportFacts f;
  if (!state && job.submitted) state = backend_for(job.scheduler).query(job, run);
  if (!state) state = JobState{Phase::pending, "never submitted", "", std::nullopt, false};
  if (!usage && job.submitted) usage = backend_for(job.scheduler).usage({job}, run).front();
  read_common(job, std::move(*state), dir, &f);
  add_usage(usage.value_or(JobUsage{{}, "not recorded: the job was never submitted"}), &f);
  read_curves(job, cwd, &f);
  f.excluded = job.excluded;
  f.timeline = make_timeline(f.curves ? f.curves->runs : std::vector<RunSpan>{}, job.hangs, job.replaced, job.excluded,
                             dir.failure, f.state);
  f.output_file = existing_output(job);
  if (!f.output_file.empty())
    f.ranks = rank_facts(read_file(f.output_file).value_or(""), k_report_rank_lines, dir.failure, f.state);
  f.preflight = dir.preflight;
  return f;
}

}  // namespace

ReportFacts gather_report(const JobRecord& job, const std::string& cwd, const CommandRunner& run,
                          std::optional<JobState> state, std::optional<JobUsage> usage) {
  return gather_job(job, cwd, run, std::move(state), std::move(usage), read_plan_dir(plan_dir(job), true));
}

ReportFacts gather_array_report(const JobRecord& array, const std::string& cwd, const CommandRunner& run,
                                const std::function<void(const ReportFacts&, TaskFacts*)>& each_task) {
  ReportFacts f;
  std::vector<JobState> states;
  if (array.submitted) states = backend_for(array.scheduler).query_tasks(array, run);
  // The tasks' pages show the array's plan, script, failure and preflight: read once, here.
  const PlanDirFacts dir = read_plan_dir(array.dir, static_cast<bool>(each_task));
  read_common(array, array.submitted ? summarize_tasks(states) : JobState{}, dir, &f);
  f.usage_note = "each task's page says what the scheduler records of it";
  std::vector<JobRecord> tasks;
  for (int i = 0; i < array.array_tasks; ++i) tasks.push_back(task_record(array, i));
  if (!tasks.empty())
    for (const auto& v : tasks.front().values) f.keys.push_back(v.key);
  std::vector<JobUsage> usage;  // for the tasks' pages, in one question
  if (each_task && array.submitted) usage = backend_for(array.scheduler).usage(tasks, run);
  for (size_t i = 0; i < tasks.size(); ++i) {
    const JobRecord& task = tasks[i];
    f.tasks.push_back({static_cast<int>(i), task.job_id, task_label(task), {}, task.values, std::nullopt, -1,
                       fmt::format("tasks/{}/report.html", i)});
    if (i < states.size()) f.tasks.back().state = states[i];
  }
  // Each task's metrics file is read once: for its own page (each_task) and its row. The tasks are independent,
  // so they are shared among a few threads; the rows stay in task order, whichever thread read them.
  for_each_index(tasks.size(), report_threads(tasks.size()), [&](size_t i) {
    TaskFacts& t = f.tasks[i];
    ReportFacts task_facts;
    if (each_task) {
      task_facts = gather_job(tasks[i], cwd, run, t.state, i < usage.size() ? std::optional(usage[i]) : std::nullopt, dir);
    } else {
      task_facts.state = t.state;
      read_curves(tasks[i], cwd, &task_facts);
    }
    if (task_facts.curves) {
      t.best_validation = best_validation(*task_facts.curves);
      const Curve* loss = task_facts.curves->curve("loss");
      t.steps = loss && !loss->points.empty() ? loss->points.back().step : 0;
    } else if (task_facts.metrics_found) {
      t.steps = 0;  // unreadable yet: its own page says why
    }
    if (each_task) each_task(task_facts, &t);
  });
  return f;
}

}  // namespace hpclaunch
