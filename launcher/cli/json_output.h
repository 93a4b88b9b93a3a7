// `--json` of submit/render, jobs, status, wait, sites, sites show and sites check: one JSON document per command
// on stdout, each with a "schema" field naming its record and version ("hpclaunch.submit/1", ...), built from the
// record types (record/job_record.h, plan_file) through nlohmann-json. The schemas: docs/json.md. Errors stay one
// line on stderr with the same exit codes (cli/main.cc).
#pragma once
#include <nlohmann/json.hpp>
#include <optional>
#include <string>
#include <vector>

#include "plan/plan.h"
#include "record/job_record.h"
#include "report/report.h"
#include "scheduler/backend.h"
#include "dialect/job_state.h"
#include "site/registry.h"
#include "survey/site_check.h"

namespace hpclaunch {

// While alive with `on`, what the command prints on stdout (a local job's output, wait's progress line) goes to
// stderr, so that stdout carries the one JSON document print() writes.
class JsonStdout {
 public:
  explicit JsonStdout(bool on);
  ~JsonStdout();
  JsonStdout(const JsonStdout&) = delete;
  JsonStdout& operator=(const JsonStdout&) = delete;
  bool on() const { return m_saved >= 0; }
  void print(const nlohmann::json& document);

 private:
  int m_saved = -1;  // the original stdout while it is redirected
};

// A job's state: {"phase", "description", "raw", "reason", "exit_code", "finished"}.
nlohmann::json state_json(const JobState& s);

// submit: the job (job.json's fields), its script, the plan (plan.json) and, for a job run here, its exit code.
nlohmann::json submit_json(const JobRecord& job, const LaunchPlan& plan, std::optional<int> exit_code);
// submit of an array on a site without job arrays (Gadi): one job per task, their ids in task order.
nlohmann::json task_jobs_json(const LaunchPlan& plan, const std::string& job_dir, const std::vector<std::string>& ids);
// render / submit --dry-run: the plan, the job directory it would use and the script.
nlohmann::json render_json(const LaunchPlan& plan, const std::string& job_dir, const std::string& script);

// jobs: one object per index entry, added as `jobs` reads them.
class JobsJson {
 public:
  void add(const std::string& dir, const JobRecord& job, const std::optional<JobState>& state, const std::string& note);
  nlohmann::json document() const;

 private:
  nlohmann::json m_jobs = nlohmann::json::array();
};

// status: the job (and an array's tasks).
nlohmann::json status_json(const JobRecord& job, const JobState& state, const std::vector<JobState>& tasks);
// status --json: prints status_json of the job's state (an array's, with each task's) and its metrics file.
void print_status_json(const JobRecord& job, const JobState& state, const std::vector<JobState>& tasks);
// wait: the final state and wait's exit code.
nlohmann::json wait_json(const JobRecord& job, const JobState& state, int exit_code);
// logs: one output file's kept lines (`text`, null when there is no output yet), or an array's tasks' in turn.
struct LogsJson {
  JobRecord job;
  std::string file;                 // "" for an array, or when there is no output yet
  std::optional<std::string> text;
  std::vector<LogsJson> tasks;
};
nlohmann::json logs_json(const LogsJson& logs, std::optional<int> rank);
// report: the facts of the page (report/report.h); each curve with its points thinned to what the page draws.
nlohmann::json report_json(const ReportFacts& facts);
// cancel: the job asked to cancel and what it is ("job", "array job", "array task").
nlohmann::json cancel_json(const JobRecord& job, const std::string& what);
// --version: the version and the commit built from.
nlohmann::json version_json(const std::string& version, const std::string& commit);
// sites: one object per profile; sites show NAME: the resolved profile; sites check NAME: the comparison.
nlohmann::json sites_json(const SiteRegistry& sites);
nlohmann::json site_json(const SiteProfile& profile);
nlohmann::json check_json(const std::string& site, const std::vector<CheckRow>& rows);

}  // namespace hpclaunch
