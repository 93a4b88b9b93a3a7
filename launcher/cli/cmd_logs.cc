// `hpclaunch logs JOB [--follow] [--rank R] [--task I]`: the job's output file (slurm-ID.out, PBS's, output.log),
// optionally only one rank's lines, optionally followed until the job ends; one task's of an array, or each in turn.
#include <fmt/core.h>

#include <chrono>
#include <filesystem>
#include <thread>

#include "cli/cli_util.h"
#include "cli/json_output.h"
#include "record/job_record.h"
#include "scheduler/backend.h"
#include "jobs/log_filter.h"
#include "jobs/output_file.h"
#include "jobs/watch.h"
#include "submit/job_index.h"
#include "util/error.h"
#include "util/file.h"
#include "util/line_splitter.h"
#include "util/command.h"

namespace hpclaunch {

namespace {

using FollowClock = std::chrono::steady_clock;

// Prints the whole lines of `bytes` that `rank` keeps; `last` also prints a partial last line.
void print_lines(LineSplitter& lines, std::string_view bytes, std::optional<int> rank, bool last = false) {
  auto emit = [&](std::string_view line) {
    if (keep_line(line, rank)) fmt::print("{}\n", line);
  };
  lines.feed(bytes, emit);
  if (last) lines.finish(emit);
  std::fflush(stdout);
}

// The lines of a whole output file that `rank` keeps, each ending in '\n'.
std::string kept_lines(const std::string& path, std::optional<int> rank) {
  std::string out;
  LineSplitter lines;
  auto keep = [&](std::string_view line) {
    if (keep_line(line, rank)) out.append(line).push_back('\n');
  };
  lines.feed(FileFollower(path).read_new(), keep);
  lines.finish(keep);
  return out;
}

// Every task's output in turn under a "==> JOB_I (values) <==" line; a task with none yet says so. With `json`,
// one document of them all instead.
void print_array_outputs(const JobRecord& array, std::optional<int> rank, bool json) {
  std::vector<LogsJson> tasks;
  for (int i = 0; i < array.array_tasks; ++i) {
    JobRecord task = task_record(array, i);
    std::string path = existing_output(task);
    std::optional<std::string> text;
    if (!path.empty()) text = kept_lines(path, rank);
    if (json) {
      tasks.push_back({task, path, text, {}});
      continue;
    }
    fmt::print("==> {} ({}) <==\n{}", task.job_id, task_label(task), text ? *text : "(no output yet)\n");
  }
  if (json) fmt::print("{}\n", logs_json({array, "", std::nullopt, tasks}, rank).dump());
}

}  // namespace

int cmd_logs(const Args& args) {
  CLI::App app("Print a job's output; --follow keeps printing until the job ends.", "logs");
  std::string ref;
  bool follow = false;
  std::optional<int> rank;
  double interval = 0.5;
  std::optional<int> task;
  bool json = false;
  app.add_option("JOB", ref, "job id from `hpclaunch jobs`, or a job directory; JOB_I: task I of an array")->required();
  app.add_option("--task", task, "task I of an array job (as JOB_I); without it an array's tasks are printed in turn")
      ->check(CLI::Range(0, 1000000));
  app.add_flag("--follow,-f", follow, "keep printing new output until the job ends");
  app.add_option("--rank,-r", rank, "only this rank's lines (the agent's [host:RANK] or srun -l's RANK: prefix)")
      ->check(CLI::Range(0, 1000000));
  app.add_option("--interval", interval, "seconds between looks at the file when following")->capture_default_str()
      ->check(CLI::Range(0.01, 3600.0));
  app.add_flag("--json", json, "print the output as one JSON document (docs/json.md); not with --follow");
  if (!parse_or_throw(app, args)) return 0;
  if (json && follow)
    throw Error("--json", "prints the output there is as one document, and --follow keeps printing until the job ends",
                "drop --follow, or --json");
  JobRecord job = resolve_job(ref, read_job_index());
  if (!job.dir_exists)
    throw failure(job.dir, "the job directory no longer exists", "its output went with it; `hpclaunch jobs` lists the others");
  if (task) job = task_record(job, *task);
  if (job.is_array()) {
    if (follow)
      throw Error("--follow", "follows one output, and " + job.job_id + " is an array of " + std::to_string(job.array_tasks) + " tasks",
                  "add --task I (0-" + std::to_string(job.array_tasks - 1) + ")");
    print_array_outputs(job, rank, json);
    return 0;
  }

  LineSplitter lines;
  if (!follow) {
    std::string path = existing_output(job);
    if (path.empty()) {
      std::string state = job.submitted ? describe(backend_for(job.scheduler).query(job, run_capture)) : "never submitted";
      throw failure(job.dir, "no output yet (job " + job.job_id + " is " + state + ")",
                    "try again once it runs, or use `hpclaunch logs --follow`");
    }
    std::string text = kept_lines(path, rank);
    if (json) fmt::print("{}\n", logs_json({job, path, text, {}}, rank).dump());
    else fmt::print("{}", text);
    return 0;
  }

  // The output file may appear only once the job runs; the state is asked at the scheduler's pace (2 s; the local
  // site 0.25 s), less often while it does not change (PollBackoff), with wait's tolerance for a scheduler that
  // hiccups (jobs/watch.h).
  PollBackoff backoff(backend_for(job.scheduler).poll_interval());
  auto next_check = FollowClock::now();
  std::string last_state;
  std::optional<FileFollower> output;
  StateWatch watch(job, run_capture);
  watch.on_note([](const std::string& note) { fmt::print(stderr, "hpclaunch: note: {}\n", note); });
  auto read_output = [&](bool last) {
    if (!output)
      if (std::string path = existing_output(job); !path.empty()) output.emplace(path);
    print_lines(lines, output ? output->read_new() : std::string(), rank, last);
  };
  for (;;) {
    read_output(false);
    if (FollowClock::now() >= next_check) {
      std::optional<JobState> state = watch.look();
      const bool changed = state && describe(*state) != last_state;
      if (state) last_state = describe(*state);
      next_check = FollowClock::now() + std::chrono::duration_cast<FollowClock::duration>(
                                            std::chrono::duration<double>(backoff.next(changed)));
      if (state && state->finished()) {
        // The scheduler may report the end a moment before the last bytes are visible: one more look.
        std::this_thread::sleep_for(std::chrono::milliseconds(300));
        read_output(true);
        fmt::print(stderr, "hpclaunch: job {} {}\n", job.job_id, describe(*state));
        return 0;
      }
    }
    std::this_thread::sleep_for(std::chrono::duration<double>(interval));
  }
}

}  // namespace hpclaunch
