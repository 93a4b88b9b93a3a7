// `hpclaunch jobs`: the jobs submitted from this machine (the job index), with each one's site, nodes, state,
// submission time and directory. A directory that vanished is listed as such; --prune drops those rows.
#include <fmt/core.h>

#include <filesystem>
#include <map>
#include <system_error>

#include "cli/cli_util.h"
#include "cli/json_output.h"
#include "record/job_record.h"
#include "scheduler/backend.h"
#include "submit/job_index.h"
#include "util/error.h"
#include "util/command.h"
#include "util/strings.h"

namespace hpclaunch {

namespace {

// "20261121-104500" -> "2026-11-21 10:45:00"; anything else unchanged.
std::string readable_time(const std::string& stamp) {
  if (stamp.size() > 19 && stamp[10] == 'T') return stamp.substr(0, 10) + " " + stamp.substr(11, 8);  // RFC 3339
  if (stamp.size() != 15 || stamp[8] != '-') return stamp;  // before submitted_at had a zone
  return fmt::format("{}-{}-{} {}:{}:{}", stamp.substr(0, 4), stamp.substr(4, 2), stamp.substr(6, 2), stamp.substr(9, 2),
                     stamp.substr(11, 2), stamp.substr(13, 2));
}

}  // namespace

int cmd_jobs(const Args& args) {
  CLI::App app("List the jobs submitted from this machine (newest last).", "jobs");
  bool no_state = false, prune = false, json = false;
  app.add_flag("--json", json, "print one JSON object per job (docs/json.md)");
  app.add_flag("--no-state", no_state, "do not ask the schedulers for states");
  app.add_flag("--prune", prune, "drop the jobs whose directory is gone from the list, print them, and list nothing else");
  if (!parse_or_throw(app, args)) return 0;

  if (prune) {
    // Only a directory that is surely gone is dropped (not one this machine cannot look into just now).
    auto dropped = prune_job_index([](const std::string& dir) {
      std::error_code ec;
      (void)std::filesystem::status(dir, ec);
      return !(ec == std::errc::no_such_file_or_directory || ec == std::errc::not_a_directory);
    });
    for (const auto& dir : dropped) fmt::print("{}\n", dir);
    fmt::print(stderr, "hpclaunch: dropped {} job(s) whose directory is gone from {}\n", dropped.size(), job_index_path());
    return 0;
  }

  std::vector<std::string> index = read_job_index();
  JobsJson rows;
  if (index.empty() && json) fmt::print("{}\n", rows.document().dump());
  if (index.empty()) {
    fmt::print(stderr, "hpclaunch: no jobs submitted from this machine yet ({} is empty or absent)\n", job_index_path());
    return 0;
  }
  if (!json) fmt::print("{:<26} {:<18} {:>5}  {:<34} {:<19}  {}\n", "JOB", "SITE", "NODES", "STATE", "SUBMITTED", "DIRECTORY");
  int rc = 0;
  std::vector<JobRecord> jobs(index.size());
  std::vector<std::string> states(index.size());
  std::vector<std::optional<JobState>> queried(index.size());  // --json: the state itself
  std::map<Scheduler, std::vector<size_t>> asked;  // the rows whose state each scheduler is asked, all at once
  for (size_t i = 0; i < index.size(); ++i) {
    try {
      jobs[i] = read_job_record(index[i]);
      if (!jobs[i].dir_exists) states[i] = "(job directory gone)";
      else if (!jobs[i].submitted) states[i] = "(never submitted)";
      else if (no_state) states[i] = "-";
      else asked[jobs[i].scheduler].push_back(i);
    } catch (const Error& e) {
      states[i] = "? (see below)";
      fmt::print(stderr, "hpclaunch: error: {}\n", e.what());
      rc = k_exit_failure;
    }
  }
  // One question per scheduler for all its jobs, not one per job, to spare a shared scheduler; one that cannot be
  // asked is one error.
  for (const auto& [scheduler, rows] : asked) {
    std::vector<JobRecord> some;
    for (size_t i : rows) some.push_back(jobs[i]);
    std::vector<JobAnswer> answers;
    try {
      answers = backend_for(scheduler).query_many(some, run_capture);
    } catch (const Error& e) {
      for (size_t i : rows) states[i] = "? (see below)";
      fmt::print(stderr, "hpclaunch: error: {}\n", e.what());
      rc = k_exit_failure;
      continue;
    }
    for (size_t k = 0; k < rows.size(); ++k) {
      size_t i = rows[k];
      if (!answers[k].state) {
        states[i] = "? (see below)";
        fmt::print(stderr, "hpclaunch: error: {}\n", answers[k].error);
        rc = k_exit_failure;
        continue;
      }
      const JobState& s = *answers[k].state;
      queried[i] = s;
      states[i] = describe(s);
      // What a queued job waits for, as submitted (`--after`).
      if (s.phase == Phase::pending && !jobs[i].after.empty()) states[i] += " after " + join(jobs[i].after, ",");
    }
  }
  for (size_t i = 0; i < index.size(); ++i) {
    const JobRecord& job = jobs[i];
    if (json) rows.add(index[i], job, queried[i], queried[i] ? "" : states[i]);
    else fmt::print("{:<26} {:<18} {:>5}  {:<34} {:<19}  {}\n", job.job_id.empty() ? "-" : job.job_id,
               job.site.empty() ? "-" : job.site, job.nodes > 0 ? std::to_string(job.nodes) : "-", states[i],
               job.submitted_at.empty() ? "-" : readable_time(job.submitted_at), job.dir.empty() ? index[i] : job.dir);
  }
  if (json) fmt::print("{}\n", rows.document().dump());
  return rc;
}

}  // namespace hpclaunch
