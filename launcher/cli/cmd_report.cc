// `hpclaunch report JOB [-o FILE] [--json]`: how a job went, as one self-contained HTML page (report/report.h) or
// its facts as JSON. An array job gets a page with a table of its tasks, and each task a page of its own.
#include <fmt/core.h>

#include <cstring>
#include <filesystem>

#include "cli/cli_util.h"
#include "cli/json_output.h"
#include "report/gather.h"
#include "submit/job_index.h"
#include "util/command.h"
#include "util/error.h"
#include "util/file.h"

namespace hpclaunch {

namespace {

namespace fs = std::filesystem;

// Writes `text` to `path` whole or not at all (a temporary file renamed over it); `sync` false: synced later, with
// the others (sync_filesystem).
void write_page(const std::string& path, const std::string& text, const std::string& flag, bool sync = true) {
  if (!write_file_atomic(path, text, 0644, sync))
    throw Error(flag.empty() ? path : flag, "cannot write " + path + ": " + std::strerror(errno),
                "give a file in a directory that exists and you can write to");
}

// The output's path: -o's, else `name` in the job's directory.
std::string output_path(const std::string& output, const JobRecord& job, const char* name) {
  std::error_code ec;
  if (output.empty()) return (fs::path(job.dir) / name).string();
  if (fs::is_directory(output, ec))
    throw Error("--output", "'" + output + "' is a directory", "give a file name, e.g. " + (fs::path(output) / name).string());
  fs::path parent = fs::absolute(output, ec).parent_path();
  if (!fs::is_directory(parent, ec))
    throw Error("--output", "the directory of '" + output + "' does not exist", "create " + parent.string() + " first");
  return output;
}

}  // namespace

int cmd_report(const Args& args) {
  CLI::App app("Write how a job went as one self-contained HTML page: request and plan, script, every run, restart "
               "and requeue with its cause, each rank's exit and last lines, the curves, the preflight, the "
               "scheduler's accounting; an array: a table of its tasks, each with a page of its own.",
               "report");
  std::string ref, output;
  bool json = false;
  app.add_option("JOB", ref, "job id from `hpclaunch jobs`, or a job directory; JOB_I: task I of an array")->required();
  app.add_option("--output,-o", output, "the page's file; default: report.html in the job directory (with --json: "
                                        "the JSON's file; default: stdout)");
  app.add_flag("--json", json, "the page's facts as one JSON document instead (docs/json.md)");
  if (!parse_or_throw(app, args)) return 0;

  JobRecord job = resolve_job(ref, read_job_index());
  if (!job.dir_exists)
    throw failure(job.dir, "the job directory no longer exists", "its records went with it; `hpclaunch jobs` lists the others");
  const std::string cwd = fs::current_path().string();
  if (json) {
    ReportFacts facts = job.is_array() ? gather_array_report(job, cwd, run_capture) : gather_report(job, cwd, run_capture);
    const std::string text = report_json(facts).dump() + "\n";
    if (output.empty()) fmt::print("{}", text);
    else write_page(output_path(output, job, "report.json"), text, "--output");
    return 0;
  }
  const std::string path = output_path(output, job, "report.html");
  if (!job.is_array()) {
    write_page(path, report_html(gather_report(job, cwd, run_capture)), output.empty() ? "" : "--output");
    fmt::print("{}\n", path);
    return 0;
  }
  // Each task's page as its facts are read (its metrics file read once, for its page and its row), none synced
  // alone: one sync of the filesystem for all of them, then the array's page, which links to them.
  const fs::path page_dir = fs::absolute(path).parent_path();
  ReportFacts facts = gather_array_report(job, cwd, run_capture, [&](const ReportFacts& task_facts, TaskFacts* task) {
    const fs::path task_page = fs::path(job.dir) / task->page;
    // A page as it stands already (a finished task's, reported again) is left alone: reading 72 KB back is cheaper
    // than writing it, and a file replaced on ext4 costs more than a new one (bench/report/RESULTS.md).
    const std::string html = report_html(task_facts);
    if (read_file(task_page.string()) != std::optional<std::string>(html)) write_page(task_page.string(), html, "", false);
    task->page = task_page.lexically_relative(page_dir).string();
  });
  if (!facts.tasks.empty() && !sync_filesystem(job.dir))
    throw Error(job.dir, std::string("cannot sync the task pages: ") + std::strerror(errno), "check the filesystem");
  write_page(path, report_html(facts), output.empty() ? "" : "--output");
  fmt::print("{}\n", path);
  return 0;
}

}  // namespace hpclaunch
