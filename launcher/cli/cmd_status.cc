// `hpclaunch status JOB...`: each job's state from its scheduler (squeue/scontrol, qstat, or the local runner); an
// array's counts per state and each task's state. Several jobs are asked together: one question per scheduler for
// all of them (what the Python package's as_completed polls), as `hpclaunch jobs` does.
#include <fmt/core.h>

#include <map>

#include "cli/cli_util.h"
#include "cli/json_output.h"
#include "record/job_record.h"
#include "scheduler/backend.h"
#include "submit/job_index.h"
#include "util/command.h"
#include "util/strings.h"

namespace hpclaunch {

namespace {

struct Queried {
  JobState state;
  std::vector<JobState> tasks;  // an array's, in task order
};

// The jobs' states: an array's from one question for all its tasks; the other jobs of one scheduler all in one
// (query_many), or, alone, by its own query.
std::vector<Queried> query_states(const std::vector<JobRecord>& jobs) {
  std::vector<Queried> out(jobs.size());
  std::map<Scheduler, std::vector<size_t>> asked;
  for (size_t i = 0; i < jobs.size(); ++i) {
    if (jobs[i].is_array()) {
      out[i].tasks = backend_for(jobs[i].scheduler).query_tasks(jobs[i], run_capture);
      out[i].state = summarize_tasks(out[i].tasks);
    } else {
      asked[jobs[i].scheduler].push_back(i);
    }
  }
  for (const auto& [scheduler, rows] : asked) {
    const SchedulerBackend& backend = backend_for(scheduler);
    if (rows.size() == 1) {  // one job: its own query, which may say more (scontrol's pending reason)
      out[rows[0]].state = backend.query(jobs[rows[0]], run_capture);
      continue;
    }
    std::vector<JobRecord> some;
    for (size_t i : rows) some.push_back(jobs[i]);
    std::vector<JobAnswer> answers = backend.query_many(some, run_capture);
    for (size_t k = 0; k < rows.size(); ++k) {
      if (!answers[k].state) throw failure(jobs[rows[k]].job_id, answers[k].error);
      out[rows[k]].state = *answers[k].state;
    }
  }
  return out;
}

void print_status(const JobRecord& job, const Queried& q) {
  fmt::print("{} {}\n", job.job_id, describe(q.state));
  for (size_t i = 0; i < q.tasks.size(); ++i) {
    JobRecord task = task_record(job, static_cast<int>(i));
    fmt::print("  {:<16} {:<40} {}\n", task.job_id, describe(q.tasks[i]), task_label(task));
  }
  if (job.snapshot) fmt::print("  snapshot: {}\n", describe_snapshot(*job.snapshot));
  if (!job.after.empty()) fmt::print("  after: {}\n", join(job.after, ", "));
  for (const auto& n : job.excluded) fmt::print("  excluded: {} ({}; run {})\n", n.node, n.reason, n.run);
  for (const auto& h : job.hangs) fmt::print("  hang: {}\n", h);
  for (const auto& s : job.spares) fmt::print("  spare: {}\n", s);
  for (const auto& r : job.replaced) fmt::print("  replaced: {}\n", r);
  if (!job.failure.empty()) fmt::print("  failure: {}\n", job.failure);
}

}  // namespace

int cmd_status(const Args& args) {
  CLI::App app("Print jobs' states as their schedulers tell them.", "status");
  std::vector<std::string> refs;
  app.add_option("JOB", refs, "job ids from `hpclaunch jobs`, or job directories; JOB_I: task I of an array. "
                              "Several are asked together: one query per scheduler")
      ->required();
  bool json = false;
  app.add_flag("--json", json, "print each job's state as one line of JSON, in the order given (docs/json.md)");
  if (!parse_or_throw(app, args)) return 0;
  std::vector<JobRecord> jobs;
  const std::vector<std::string> index = read_job_index();
  for (const auto& ref : refs) jobs.push_back(resolve_job(ref, index));
  std::vector<Queried> states = query_states(jobs);
  for (size_t i = 0; i < jobs.size(); ++i) {
    if (json) print_status_json(jobs[i], states[i].state, states[i].tasks);
    else print_status(jobs[i], states[i]);
  }
  return 0;
}

}  // namespace hpclaunch
