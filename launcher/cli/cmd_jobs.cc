// `hpclaunch jobs`: the jobs submitted from this machine (the job index), with each one's site, nodes, state,
// submission time and directory. A directory that vanished is listed as such; --prune drops those rows.
#include <fmt/core.h>

#include <filesystem>
#include <set>
#include <system_error>

#include "cli/cli_util.h"
#include "cli/json_output.h"
#include "record/job_record.h"
#include "scheduler/backend.h"
#include "submit/job_index.h"
#include "util/error.h"
#include "util/process.h"
#include "util/strings.h"

namespace hpclaunch {

namespace {

// "20261121-104500" -> "2026-11-21 10:45:00"; anything else unchanged.
std::string readable_time(const std::string& stamp) {
  if (stamp.size() != 15 || stamp[8] != '-') return stamp;
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
  std::set<Scheduler> unreachable;  // schedulers that failed once are not asked again: one error each
  for (const auto& dir : index) {
    JobRecord job;
    std::string state;
    std::optional<JobState> queried;  // --json: the state itself
    try {
      job = read_job_record(dir);
      if (!job.dir_exists) state = "(job directory gone)";
      else if (!job.submitted) state = "(never submitted)";
      else if (no_state) state = "-";
      else if (unreachable.count(job.scheduler)) state = "? (see below)";
      else {
        JobState s = backend_for(job.scheduler).query(job, run_capture);
        queried = s;
        state = describe(s);
        // What a queued job waits for, as submitted (`--after`).
        if (s.phase == Phase::pending && !job.after.empty()) state += " after " + join(job.after, ",");
      }
    } catch (const Error& e) {
      state = "? (see below)";
      if (job.scheduler != Scheduler::local) unreachable.insert(job.scheduler);
      fmt::print(stderr, "hpclaunch: error: {}\n", e.what());
      rc = k_exit_failure;
    }
    if (json) rows.add(dir, job, queried, queried ? "" : state);
    else fmt::print("{:<26} {:<18} {:>5}  {:<34} {:<19}  {}\n", job.job_id.empty() ? "-" : job.job_id,
               job.site.empty() ? "-" : job.site, job.nodes > 0 ? std::to_string(job.nodes) : "-", state,
               job.submitted_at.empty() ? "-" : readable_time(job.submitted_at), job.dir.empty() ? dir : job.dir);
  }
  if (json) fmt::print("{}\n", rows.document().dump());
  return rc;
}

}  // namespace hpclaunch
