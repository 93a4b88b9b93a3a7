#include "record/job_record.h"

#include <fmt/core.h>

#include <algorithm>
#include <cstdlib>
#include <filesystem>
#include <nlohmann/json.hpp>

#include "dialect/dialect.h"
#include "util/byte_size.h"
#include "util/error.h"
#include "util/file.h"
#include "util/json_numbers.h"
#include "util/strings.h"

namespace hpclaunch {

namespace fs = std::filesystem;

void to_json(nlohmann::json& j, Scheduler s) { j = to_string(s); }

// A scheduler's name it does not know is refused, never guessed: read as Slurm, `cancel` would run scancel on it.
void from_json(const nlohmann::json& j, Scheduler& s) {
  std::string name = j.is_string() ? j.get<std::string>() : j.dump();
  std::optional<Scheduler> named = scheduler_named(name);
  if (!named)
    throw Error("scheduler", "'" + name + "' is not a scheduler this hpclaunch knows (" +
                                 join(names_of(scheduler_names()), ", ") + ")",
                "the job was written by another hpclaunch, or by hand: use that hpclaunch, or fix the file");
  s = *named;
}

void to_json(nlohmann::json& j, LaunchMode m) { j = to_string(m); }

void from_json(const nlohmann::json& j, LaunchMode& m) {
  std::optional<LaunchMode> named = j.is_string() ? launch_mode_named(j.get<std::string>()) : std::nullopt;
  m = named.value_or(LaunchMode::agent);
}

void to_json(nlohmann::json& j, const PlanFields& p) {
  j = {{"site", p.site},       {"site_file", p.site_file},       {"scheduler", p.scheduler}, {"launcher", p.launcher},
       {"world_size", p.world_size}, {"time_seconds", p.time_seconds}, {"time", p.time},      {"container", p.container},
       {"env", p.env},         {"command", p.command}};
#define HPCLAUNCH_PLAN_TO_JSON(type, name) j[#name] = p.name;
  HPCLAUNCH_PLAN_SAME_FIELDS(HPCLAUNCH_PLAN_TO_JSON)
#undef HPCLAUNCH_PLAN_TO_JSON
}

void from_json(const nlohmann::json& j, PlanFields& p) {
  // A field the file lacks keeps its default (as NLOHMANN_DEFINE_TYPE_NON_INTRUSIVE_WITH_DEFAULT reads).
  const PlanFields d;
#define HPCLAUNCH_PLAN_FROM_JSON(type, name) p.name = j.value(#name, d.name);
  HPCLAUNCH_PLAN_FROM_JSON(std::string, site)
  HPCLAUNCH_PLAN_FROM_JSON(std::string, site_file)
  HPCLAUNCH_PLAN_FROM_JSON(Scheduler, scheduler)
  HPCLAUNCH_PLAN_FROM_JSON(LaunchMode, launcher)
  HPCLAUNCH_PLAN_FROM_JSON(int, world_size)
  HPCLAUNCH_PLAN_FROM_JSON(long, time_seconds)
  HPCLAUNCH_PLAN_FROM_JSON(std::string, time)
  HPCLAUNCH_PLAN_FROM_JSON(std::string, container)
  HPCLAUNCH_PLAN_FROM_JSON(std::vector<PlanEnvEntry>, env)
  HPCLAUNCH_PLAN_FROM_JSON(std::vector<std::string>, command)
  HPCLAUNCH_PLAN_SAME_FIELDS(HPCLAUNCH_PLAN_FROM_JSON)
#undef HPCLAUNCH_PLAN_FROM_JSON
}

void to_json(nlohmann::json& j, const PlanFile& p) {
  j = static_cast<const PlanFields&>(p);
  if (p.array.tasks > 0) j["array"] = p.array;
}

void from_json(const nlohmann::json& j, PlanFile& p) {
  j.get_to(static_cast<PlanFields&>(p));
  p.array = j.value("array", ArraySummary{});
}

std::string describe_snapshot(const SnapshotRecord& s) {
  std::string what;
  if (!s.git) what = "not a git work tree";
  else if (s.commit.empty()) what = "no commit yet";
  else what = "commit " + s.commit.substr(0, 12) + (s.dirty ? " with uncommitted changes" : ", clean");
  return fmt::format("{}; {} files ({}) from {}, run in {}", what, s.files,
                     format_bytes(static_cast<std::uint64_t>(std::max(0LL, s.bytes))), s.source, s.workdir);
}

void to_json(nlohmann::json& j, const SubmissionFile& f) {
  j = {{"job_id", f.job_id}, {"scheduler", f.scheduler}, {"site", f.site}, {"job_dir", f.job_dir},
       {"submitted_at", f.submitted_at}, {"nodes", f.nodes}, {"after", f.after}, {"task_job_ids", f.task_job_ids}};
  if (f.snapshot) j["snapshot"] = *f.snapshot;
}

void from_json(const nlohmann::json& j, SubmissionFile& f) {
  const SubmissionFile d;
  f.job_id = j.value("job_id", d.job_id);
  f.scheduler = j.value("scheduler", d.scheduler);
  f.site = j.value("site", d.site);
  f.job_dir = j.value("job_dir", d.job_dir);
  f.submitted_at = j.value("submitted_at", d.submitted_at);
  f.nodes = j.value("nodes", d.nodes);
  f.after = j.value("after", d.after);
  f.task_job_ids = j.value("task_job_ids", d.task_job_ids);
  if (auto it = j.find("snapshot"); it != j.end() && !it->is_null()) f.snapshot = it->get<SnapshotRecord>();
}

void to_json(nlohmann::json& j, const LocalStateFile& s) {
  j = {{"pid", s.pid}, {"state", s.state}};
  if (s.exit_code) j["exit_code"] = *s.exit_code;
  if (s.runner) j["runner"] = s.runner;
}

void from_json(const nlohmann::json& j, LocalStateFile& s) {
  s.pid = j.value("pid", 0LL);
  s.state = j.at("state").get<std::string>();
  if (auto it = j.find("exit_code"); it != j.end() && !it->is_null()) s.exit_code = it->get<int>();
  s.runner = j.value("runner", 0LL);
}

namespace {

// The struct in JSON file `path`, or nullopt when the file is absent. Throws Error naming the file when it is
// not JSON or not what T expects.
template <class T>
std::optional<T> read_json_file(const fs::path& path) {
  auto text = read_file(path.string());
  if (!text) return std::nullopt;
  nlohmann::json j = nlohmann::json::parse(*text, nullptr, false);
  const char* fix = "the job directory was changed by hand; resubmit or fix the file";
  if (j.is_discarded() || !j.is_object()) throw failure(path.string(), "is not a JSON object", fix);
  if (!floats_fit_int(j)) throw failure(path.string(), "has a number out of range", fix);
  try {
    return j.get<T>();
  } catch (const nlohmann::json::exception& e) {
    throw failure(path.string(), std::string("has an unexpected field: ") + e.what(), fix);
  } catch (const Error& e) {  // a field's value refused by its reader, which names the field
    throw failure(path.string(), e.what());
  }
}

}  // namespace

PreflightReport parse_preflight(const std::string& text, const std::string& where) {
  nlohmann::json j = nlohmann::json::parse(text, nullptr, false);
  const char* fix = "run `hpclaunch check` again, or name the nodes to leave out on the command line";
  if (j.is_discarded() || !j.is_object() || !j.contains("bad_nodes") || !j["bad_nodes"].is_array())
    throw failure(where, "is not a preflight report (a JSON object with bad_nodes)", fix);
  for (const auto& name : j["bad_nodes"])
    if (!name.is_string()) throw failure(where, "bad_nodes holds something other than node names", fix);
  try {
    return j.get<PreflightReport>();
  } catch (const nlohmann::json::exception& e) {
    throw failure(where, std::string("has an unexpected field: ") + e.what(), fix);
  }
}

std::vector<ExcludedNode> bad_nodes_of_preflight(const std::string& text, const std::string& where, int run) {
  const PreflightReport report = parse_preflight(text, where);
  std::vector<ExcludedNode> out;
  for (const auto& name : report.bad_nodes) {
    ExcludedNode n{name, "preflight", run};
    for (const auto& node : report.nodes)
      if (node.node == n.node && !node.problems.empty()) n.reason += ": " + join(node.problems, "; ");
    out.push_back(n);
  }
  return out;
}

std::vector<ExcludedNode> merge_excluded(std::vector<ExcludedNode> known, const std::vector<ExcludedNode>& found) {
  for (const auto& n : found) {
    bool seen = false;
    for (const auto& k : known) seen = seen || k.node == n.node;
    if (!seen) known.push_back(n);
  }
  return known;
}

ExcludedNodesFile read_excluded_nodes(const std::string& job_dir) {
  return read_json_file<ExcludedNodesFile>(fs::path(job_dir) / "excluded-nodes.json").value_or(ExcludedNodesFile{});
}

void write_excluded_nodes(const std::string& job_dir, const ExcludedNodesFile& file) {
  std::string path = (fs::path(job_dir) / "excluded-nodes.json").string();
  if (!write_file_atomic(path, nlohmann::json(file).dump(2) + "\n"))
    throw failure(path, "cannot be written", "check the job directory's permissions and free space");
}

namespace {

// failure.json's and the hang files' "summary": what status shows. A file being written, or not JSON, says nothing.
std::string summary_of(const fs::path& file) {
  auto text = read_file(file.string());
  if (!text) return "";
  auto j = nlohmann::json::parse(*text, nullptr, false);
  if (!j.is_object()) return "";
  auto s = j.find("summary");
  return s != j.end() && s->is_string() ? s->get<std::string>() : "";
}

void read_agent_words(JobRecord* r) {
  r->failure = summary_of(fs::path(r->dir) / "failure.json");
  std::error_code ec;
  std::vector<std::pair<int, fs::path>> files;
  for (const auto& attempt : fs::directory_iterator(fs::path(r->dir) / "stacks", ec)) {
    const std::string name = attempt.path().filename().string();
    if (name.rfind("attempt_", 0) != 0) continue;
    int n = std::atoi(name.c_str() + 8);
    std::error_code ec2;
    for (const auto& f : fs::directory_iterator(attempt.path(), ec2))
      if (f.path().filename().string().rfind("hang-", 0) == 0) files.emplace_back(n, f.path());
  }
  std::sort(files.begin(), files.end());
  for (const auto& [n, f] : files)
    if (auto s = summary_of(f); !s.empty()) r->hangs.push_back(fmt::format("attempt {}: {}", n, s));
  if (auto text = read_file((fs::path(r->dir) / "nodes.json").string())) {
    auto j = nlohmann::json::parse(*text, nullptr, false);
    auto strings = [&j](const char* key) {
      std::vector<std::string> out;
      if (j.is_object() && j.contains(key) && j[key].is_array())
        for (const auto& s : j[key])
          if (s.is_string()) out.push_back(s.get<std::string>());
      return out;
    };
    r->spares = strings("standby");
    r->replaced = strings("replaced");
  }
}

}  // namespace

std::optional<PlanFile> read_plan_file(const std::string& dir) {
  return read_json_file<PlanFile>(fs::path(dir) / "plan.json");
}

JobRecord read_job_record(const std::string& dir) {
  JobRecord r;
  std::error_code ec;
  r.dir = fs::absolute(dir, ec).lexically_normal().string();
  if (r.dir.size() > 1 && r.dir.back() == '/') r.dir.pop_back();
  if (!fs::is_directory(r.dir, ec)) {
    r.dir_exists = false;
    return r;
  }
  if (auto plan = read_plan_file(r.dir)) {
    r.site = plan->site;
    r.scheduler = plan->scheduler;
    r.job_name = plan->job_name;
    r.nodes = plan->nodes;
    r.command = plan->command;
    r.array_tasks = plan->array.tasks;
    r.array_max_concurrent = plan->array.max_concurrent;
    r.max_requeues = plan->requeue ? plan->max_requeues : 0;
  }
  if (auto job = read_json_file<SubmissionFile>(fs::path(r.dir) / "job.json")) {
    r.submitted = true;
    r.job_id = job->job_id;
    r.scheduler = job->scheduler;
    if (!job->site.empty()) r.site = job->site;
    r.submitted_at = job->submitted_at;
    if (job->nodes > 0) r.nodes = job->nodes;
    r.after = job->after;
    r.task_job_ids = job->task_job_ids;
    r.snapshot = job->snapshot;
  }
  r.excluded = read_excluded_nodes(r.dir).nodes;
  read_agent_words(&r);
  return r;
}

std::string task_job_id(Scheduler scheduler, const std::string& array_id, int task) {
  return dialect_for(scheduler).task_job_id(array_id, task);
}

JobRecord task_record(const JobRecord& array, int task) {
  if (array.array_tasks <= 0 || array.task)
    throw Error(array.job_id.empty() ? array.dir : array.job_id, "is not an array job", "give the job without a task");
  if (task < 0 || task >= array.array_tasks)
    throw Error(array.job_id.empty() ? array.dir : array.job_id,
                "has no task " + std::to_string(task) + " (its tasks are 0-" + std::to_string(array.array_tasks - 1) + ")",
                "give a task in that range");
  JobRecord t = array;
  t.task = task;
  t.array_dir = array.dir;
  t.array_job_id = array.job_id;
  t.dir = (fs::path(array.dir) / "tasks" / std::to_string(task)).string();
  if (array.per_task())  // a job of its own; "" for a task whose submission never happened
    t.job_id = static_cast<size_t>(task) < array.task_job_ids.size() ? array.task_job_ids[task] : "";
  else if (!array.job_id.empty())
    t.job_id = task_job_id(array.scheduler, array.job_id, task);
  if (auto file = read_json_file<TaskFile>(fs::path(t.dir) / "task.json")) {
    t.values = file->values;
    t.command = file->command;
  }
  return t;
}

std::string task_label(const JobRecord& task) {
  if (task.values.empty()) return "task " + std::to_string(task.task.value_or(0));
  std::string out;
  for (const auto& v : task.values) out += (out.empty() ? "" : " ") + v.key + "=" + v.value;
  return out;
}

namespace {

// JOB_I or JOB[I]: the names the array may have, and the task, in the first dialect whose spelling `ref` is;
// nullopt for anything else.
std::optional<std::pair<std::vector<std::string>, int>> split_task_ref(const std::string& ref) {
  for (const SchedulerDialect* d : all_dialects())
    if (auto parts = d->split_task_ref(ref)) return parts;
  return std::nullopt;
}

JobRecord resolve_whole_job(const std::string& ref, const std::vector<std::string>& index);

}  // namespace

JobRecord resolve_job(const std::string& ref, const std::vector<std::string>& index) {
  auto parts = split_task_ref(ref);
  try {
    return resolve_whole_job(ref, index);
  } catch (const Error&) {
    if (!parts) throw;
  }
  for (const auto& name : parts->first) {
    JobRecord array;
    try {
      array = resolve_whole_job(name, index);
    } catch (const Error&) {
      continue;
    }
    return task_record(array, parts->second);
  }
  return resolve_whole_job(ref, index);  // none: the complaint about `ref` itself
}

namespace {

JobRecord resolve_whole_job(const std::string& ref, const std::vector<std::string>& index) {
  std::error_code ec;
  if (ref.empty()) throw Error("JOB", "is empty", "give a job id from `hpclaunch jobs` or a job directory");
  if (fs::is_directory(ref, ec)) {
    JobRecord r = read_job_record(ref);
    if (!r.submitted && !fs::exists(fs::path(r.dir) / "plan.json"))
      throw Error(ref, "is a directory but not a job directory (no job.json or plan.json)",
                  "give a directory written by `hpclaunch submit`, or a job id from `hpclaunch jobs`");
    return r;
  }
  // Newest first: a job id reused by a recreated test cluster means the latest job.
  for (auto it = index.rbegin(); it != index.rend(); ++it) {
    if (*it == ref || fs::path(*it).filename() == ref) return read_job_record(*it);
  }
  for (auto it = index.rbegin(); it != index.rend(); ++it) {
    JobRecord r = read_job_record(*it);
    if (!r.dir_exists) continue;
    // A task of an array whose tasks are jobs of their own is named by its own id (the first's names the array).
    for (size_t i = 1; i < r.task_job_ids.size(); ++i)
      if (r.task_job_ids[i] == ref && r.array_tasks > 0) return task_record(r, static_cast<int>(i));
    if (r.job_id == ref) return r;
  }
  throw Error(ref, "is neither a job directory nor a job id listed by `hpclaunch jobs`",
              "run `hpclaunch jobs` for the list, or give the job directory's path");
}

}  // namespace

}  // namespace hpclaunch
