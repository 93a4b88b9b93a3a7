#include "cli/json_output.h"

#include <fmt/core.h>
#include <unistd.h>
#include <yaml-cpp/yaml.h>

#include <cstdio>
#include <filesystem>

#include "jobs/metrics_location.h"
#include "report/gather.h"
#include "runtime/rendezvous.h"
#include "site/profile_yaml.h"
#include "submit/submit_job.h"
#include "util/command.h"

namespace hpclaunch {

namespace {

// Version 1 of every record; a field's meaning never changes within a version (docs/json.md).
nlohmann::json with_schema(const std::string& record, nlohmann::json body) {
  nlohmann::json j = {{"schema", "hpclaunch." + record + "/1"}};
  j.update(body);
  return j;
}

// job.json's record of a job read back (JobRecord), as SubmissionFile writes it.
SubmissionFile submission_of(const JobRecord& r) {
  SubmissionFile f;
  f.job_id = r.job_id;
  f.scheduler = r.scheduler;
  f.site = r.site;
  f.job_dir = r.dir;
  f.submitted_at = r.submitted_at;
  f.nodes = r.nodes;
  f.after = r.after;
  f.snapshot = r.snapshot;
  return f;
}

// The job's rendezvous port: the profile's fixed one, else the job id's (runtime/rendezvous.h).
int job_master_port(const LaunchPlan& plan, const std::string& job_id) {
  return plan.site.rendezvous.port ? plan.site.rendezvous.port : derive_master_port(job_id);
}

// A YAML scalar as JSON: quoted ones are strings; plain ones null, true/false, numbers, or strings.
nlohmann::json scalar_json(const YAML::Node& n) {
  const std::string& s = n.Scalar();
  if (n.Tag() == "!") return s;
  if (s == "~" || s == "null") return nullptr;
  if (s == "true" || s == "false") return s == "true";
  try {
    size_t used = 0;
    long long i = std::stoll(s, &used);
    if (used == s.size()) return i;
    double d = std::stod(s, &used);
    if (used == s.size()) return d;
  } catch (const std::exception&) {
  }
  return s;
}

nlohmann::json yaml_json(const YAML::Node& n) {
  if (n.IsMap()) {
    nlohmann::json out = nlohmann::json::object();
    for (auto it = n.begin(); it != n.end(); ++it) out[it->first.Scalar()] = yaml_json(it->second);
    return out;
  }
  if (n.IsSequence()) {
    nlohmann::json out = nlohmann::json::array();
    for (const auto& item : n) out.push_back(yaml_json(item));
    return out;
  }
  if (n.IsScalar()) return scalar_json(n);
  return nullptr;
}

}  // namespace

JsonStdout::JsonStdout(bool on) {
  if (!on) return;
  std::fflush(stdout);
  m_saved = ::dup(STDOUT_FILENO);
  if (m_saved >= 0) ::dup2(STDERR_FILENO, STDOUT_FILENO);
}

JsonStdout::~JsonStdout() {
  if (m_saved < 0) return;
  std::fflush(stdout);
  ::dup2(m_saved, STDOUT_FILENO);
  ::close(m_saved);
}

void JsonStdout::print(const nlohmann::json& document) {
  std::fflush(stdout);
  if (m_saved >= 0) ::dup2(m_saved, STDOUT_FILENO);
  fmt::print("{}\n", document.dump());
  std::fflush(stdout);
  if (m_saved >= 0) ::dup2(STDERR_FILENO, STDOUT_FILENO);
}

nlohmann::json state_json(const JobState& s) {
  nlohmann::json j = {{"phase", to_string(s.phase)}, {"description", describe(s)}, {"raw", s.raw},
                      {"reason", s.reason},          {"finished", s.finished()}, {"exit_code", nullptr}};
  if (s.exit_code) j["exit_code"] = *s.exit_code;
  return j;
}

nlohmann::json submit_json(const JobRecord& job, const LaunchPlan& plan, std::optional<int> exit_code) {
  nlohmann::json j = {{"job", submission_of(job)},
                      {"script", (std::filesystem::path(job.dir) / "job.sh").string()},
                      {"plan", plan_file(plan)},
                      {"rendezvous_port", job_master_port(plan, job.job_id)},
                      {"exit_code", nullptr}};
  if (exit_code) j["exit_code"] = *exit_code;
  return with_schema("submit", j);
}

nlohmann::json task_jobs_json(const LaunchPlan& plan, const std::string& job_dir, const std::vector<std::string>& ids) {
  return with_schema("task-jobs", {{"job_dir", job_dir}, {"site", plan.site.name}, {"task_job_ids", ids}, {"plan", plan_file(plan)}});
}

nlohmann::json render_json(const LaunchPlan& plan, const std::string& job_dir, const std::string& script) {
  return with_schema("render", {{"job_dir", job_dir}, {"script_text", script}, {"plan", plan_file(plan)}});
}

void JobsJson::add(const std::string& dir, const JobRecord& job, const std::optional<JobState>& state,
                   const std::string& note) {
  nlohmann::json j = {{"dir", job.dir.empty() ? dir : job.dir},
                      {"dir_exists", job.dir_exists},
                      {"submitted", job.submitted},
                      {"job", submission_of(job)},
                      {"array_tasks", job.array_tasks},
                      {"command", job.command},
                      {"state", nullptr},
                      {"note", note}};
  if (state) j["state"] = state_json(*state);
  m_jobs.push_back(j);
}

nlohmann::json JobsJson::document() const { return with_schema("jobs", {{"jobs", m_jobs}}); }

nlohmann::json status_json(const JobRecord& job, const JobState& state, const std::vector<JobState>& tasks) {
  nlohmann::json list = nlohmann::json::array();
  for (size_t i = 0; i < tasks.size(); ++i) {
    JobRecord task = task_record(job, static_cast<int>(i));
    list.push_back({{"task", i}, {"job_id", task.job_id}, {"dir", task.dir}, {"values", task.values},
                    {"state", state_json(tasks[i])}});
  }
  return with_schema("status", {{"job_id", job.job_id},
                                {"dir", job.dir},
                                {"state", state_json(state)},
                                {"tasks", list},
                                {"after", job.after},
                                {"excluded", job.excluded},
                                {"failure", job.failure},
                                {"hangs", job.hangs},
                                {"spares", job.spares},
                                {"replaced", job.replaced},
                                {"snapshot", job.snapshot ? nlohmann::json(*job.snapshot) : nlohmann::json(nullptr)}});
}

void print_status_json(const JobRecord& job, const JobState& state, const std::vector<JobState>& tasks) {
  nlohmann::json j = status_json(job, state, tasks);
  j["metrics_file"] = metrics_path(job, std::filesystem::current_path().string());
  fmt::print("{}\n", j.dump());
}

nlohmann::json wait_json(const JobRecord& job, const JobState& state, int exit_code) {
  return with_schema("wait", {{"job_id", job.job_id}, {"dir", job.dir}, {"state", state_json(state)},
                              {"exit_code", exit_code}});
}

namespace {

nlohmann::json logs_body(const LogsJson& logs) {
  nlohmann::json j = {{"job_id", logs.job.job_id}, {"dir", logs.job.dir}, {"file", nullptr}, {"text", nullptr}};
  if (!logs.file.empty()) j["file"] = logs.file;
  if (logs.text) j["text"] = *logs.text;
  return j;
}

}  // namespace

nlohmann::json logs_json(const LogsJson& logs, std::optional<int> rank) {
  nlohmann::json j = logs_body(logs);
  j["rank"] = rank ? nlohmann::json(*rank) : nlohmann::json(nullptr);
  j["tasks"] = nlohmann::json::array();
  for (size_t i = 0; i < logs.tasks.size(); ++i) {
    nlohmann::json t = logs_body(logs.tasks[i]);
    t["task"] = i;
    j["tasks"].push_back(t);
  }
  return with_schema("logs", j);
}

namespace {

// A curve: how many points, its last, and the points as the page draws them ([step, value], null where not finite).
nlohmann::json curve_json(const Curve& c) {
  Series s;
  for (const auto& p : c.points) s.x.push_back(static_cast<double>(p.step)), s.y.push_back(p.value);
  nlohmann::json drawn = nlohmann::json::array();
  if (!c.points.empty()) {
    s = thin_series(s, s.x.front(), s.x.back(), k_report_curve_columns);
    for (size_t i = 0; i < s.x.size(); ++i) drawn.push_back({static_cast<long long>(s.x[i]), s.y[i]});
  }
  nlohmann::json j = {{"field", c.field}, {"points", c.points.size()}, {"drawn", drawn}};
  if (!c.points.empty()) j["last"] = {{"step", c.points.back().step}, {"value", c.points.back().value}};
  return j;
}

nlohmann::json timeline_json(const std::vector<TimelineEvent>& events) {
  nlohmann::json out = nlohmann::json::array();
  for (const auto& ev : events)
    out.push_back({{"wall_s", ev.wall_s ? nlohmann::json(*ev.wall_s) : nlohmann::json(nullptr)},
                   {"run", ev.run ? nlohmann::json(*ev.run) : nlohmann::json(nullptr)},
                   {"kind", ev.kind},
                   {"what", ev.what},
                   {"detail", ev.detail}});
  return out;
}

nlohmann::json point_json(const std::optional<Point>& p) {
  return p ? nlohmann::json{{"step", p->step}, {"value", p->value}} : nlohmann::json(nullptr);
}

}  // namespace

nlohmann::json report_json(const ReportFacts& f) {
  nlohmann::json ranks = nlohmann::json::array(), curves = nullptr, tasks = nlohmann::json::array(),
                 usage = nlohmann::json::object();
  for (const auto& r : f.ranks) ranks.push_back({{"rank", r.rank}, {"exit", r.exit}, {"last_lines", r.last_lines}});
  if (f.curves) {
    curves = {{"runs", f.curves->runs.size()}, {"fields", nlohmann::json::array()}};
    for (const auto& c : f.curves->curves) curves["fields"].push_back(curve_json(c));
  }
  for (const auto& [k, v] : f.usage) usage[k] = v;
  for (const auto& t : f.tasks)
    tasks.push_back({{"task", t.task},       {"job_id", t.job_id}, {"label", t.label},
                     {"values", t.values},   {"state", state_json(t.state)},   {"best_validation", point_json(t.best_validation)},
                     {"steps", t.steps >= 0 ? nlohmann::json(t.steps) : nlohmann::json(nullptr)}, {"page", t.page}});
  return with_schema(
      "report",
      {{"job_id", f.job_id},
       {"dir", f.job_dir},
       {"site", f.site},
       {"scheduler", f.scheduler},
       {"submitted_at", f.submitted_at},
       {"snapshot", f.snapshot ? nlohmann::json(*f.snapshot) : nlohmann::json(nullptr)},
       {"state", state_json(f.state)},
       {"plan", f.plan ? nlohmann::json(*f.plan) : nlohmann::json(nullptr)},
       {"script", f.script},
       {"timeline", timeline_json(f.timeline)},
       {"output_file", f.output_file},
       {"ranks", ranks},
       {"metrics_file", f.metrics_file},
       {"curves", curves},
       {"metrics_note", f.metrics_note},
       {"preflight", f.preflight ? nlohmann::json(*f.preflight) : nlohmann::json(nullptr)},
       {"excluded", f.excluded},
       {"usage", usage},
       {"usage_note", f.usage_note},
       {"keys", f.keys},
       {"tasks", tasks}});
}

nlohmann::json cancel_json(const JobRecord& job, const std::string& what) {
  return with_schema("cancel",
                     {{"job_id", job.job_id}, {"dir", job.dir}, {"scheduler", job.scheduler}, {"what", what}});
}

nlohmann::json version_json(const std::string& version, const std::string& commit) {
  return with_schema("version", {{"version", version}, {"commit", commit}});
}

nlohmann::json sites_json(const SiteRegistry& sites) {
  nlohmann::json list = nlohmann::json::array();
  for (const SiteProfile* p : sites.all())
    list.push_back({{"name", p->name},
                    {"title", p->title},
                    {"scheduler", p->scheduler},
                    {"status", p->retired() ? "retired" : p->status},
                    {"successors", p->successors},
                    {"gpus_per_node", p->node.gpus},
                    {"gpu_model", p->node.gpu_model},
                    {"cores_per_node", p->node.cores},
                    {"memory_gb", p->node.memory_gb},
                    {"file", p->file}});
  return with_schema("sites", {{"sites", list}});
}

nlohmann::json site_json(const SiteProfile& profile) {
  // The resolved profile as `sites show` prints it (profile_to_yaml), read back into JSON.
  return with_schema("site", {{"file", profile.file}, {"profile", yaml_json(YAML::Load(profile_to_yaml(profile)))}});
}

nlohmann::json check_json(const std::string& site, const std::vector<CheckRow>& rows) {
  return with_schema("check", check_to_json(site, rows));
}

}  // namespace hpclaunch
