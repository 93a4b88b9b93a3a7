// `hpclaunch submit` and `render` from the parsed flags to the submitted job, in one place: plan (with the
// machine's shape and the scheduler's default account), job directory, dependencies, render once, check, reserve,
// submit. The CLI (cli/cmd_submit.cc) parses the flags and prints; what it prints is all in the Submission.
#pragma once
#include <functional>
#include <optional>
#include <string>
#include <vector>

#include "plan/plan.h"
#include "scheduler/backend.h"
#include "submit/task_jobs.h"

namespace hpclaunch {

// The flags of `hpclaunch submit|render`, parsed.
struct SubmitRequest {
  JobRequest request;
  std::vector<std::string> site_files;  // --site-file
  std::string job_dir;                  // --job-dir ("": ./hpclaunch-jobs/NAME-TIME)
  std::string job_dir_mode;             // --job-dir-mode ("": 0700)
  bool dry_run = false;                 // --dry-run, or `render`: plan and render, write and submit nothing
  std::optional<bool> check;            // --check / --no-check; unset: the profile's submit_check
  std::vector<std::string> after;       // --after JOB[:ok|any|notok]
  bool detach = false;                  // --detach: a local job runs in the background
  std::string snapshot_prepared;        // --snapshot-prepared DIR: the snapshot submit --remote sent (snapshot.h)
};

// Everything about one submission that submit prints (or a --json writer writes).
struct Submission {
  LaunchPlan plan;
  std::string job_dir;                           // absolute
  std::string script;                            // job.sh's text
  std::string script_path;                       // JOBDIR/job.sh ("" for a dry run: nothing written)
  std::vector<Dependency> after;                 // --after, as the scheduler's job ids
  std::vector<std::string> dependency_options;   // what they add to the scheduler's submit command line
  std::string job_id;                            // "" for a dry run
  Scheduler scheduler = Scheduler::slurm;
  std::string site;
  bool dry_run = false;
  std::optional<int> exit_code;                  // the job's exit status when it ran here (local site)
  bool detached = false;                         // a local job started in the background (--detach)
  JobRecord record;                              // job.json as written (a submitted job's)
  // An array on a site that takes no job arrays (the profile's `arrays: false`, Gadi): one job per task, in
  // JOBDIR/tasks/I (submit/task_jobs.h); their ids in task order. `script` is every task's script for a dry run.
  bool per_task = false;
  std::vector<std::string> task_job_ids;
  std::optional<SnapshotRecord> snapshot;  // submit --snapshot: the copy the job runs (not for a dry run)
};

// What happens on the way, in order, for the CLI to tell at once.
struct SubmitEvents {
  std::function<void(const std::string&)> warning;  // the plan's warnings, the job directory's location
  std::function<void(const std::string&)> note;     // --check where the scheduler cannot validate
  std::function<void(const TestVerdict&)> verdict;  // the scheduler's validation, accepted or not
  std::function<void(const Submission&)> submitted; // the job has an id; a local job is about to run here
  TaskSubmitted task_submitted;                      // per_task: one task's job has an id
};

// Plans, renders and (unless a dry run) writes the job directory and submits it through its site's backend,
// running scheduler commands through `run`. Throws Error on bad input (nothing written or submitted) and when the
// scheduler refuses (the job directory removed again).
Submission submit_request(const SubmitRequest& request, const CommandRunner& run, const SubmitEvents& events = {});

}  // namespace hpclaunch
