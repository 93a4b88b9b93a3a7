#include "jobs/job_record.h"
#include "util/file.h"

#include <cctype>
#include <filesystem>

#include <nlohmann/json.hpp>

#include "util/error.h"

namespace hpclaunch {

namespace fs = std::filesystem;

namespace {

// The JSON object in `path`, or nullopt when the file is absent. Throws Error when it is not JSON.
std::optional<nlohmann::json> read_json(const fs::path& path) {
  auto text = read_file(path.string());
  if (!text) return std::nullopt;
  nlohmann::json j = nlohmann::json::parse(*text, nullptr, false);
  if (j.is_discarded() || !j.is_object())
    throw failure(path.string(), "is not a JSON object", "the job directory was changed by hand; resubmit or fix the file");
  return j;
}

std::string get_string(const nlohmann::json& j, const char* key) {
  auto it = j.find(key);
  if (it == j.end()) return {};
  if (it->is_string()) return it->get<std::string>();
  if (it->is_number()) return it->dump();
  return {};
}

std::string numeric_prefix(const std::string& id) {
  size_t n = 0;
  while (n < id.size() && std::isdigit(static_cast<unsigned char>(id[n]))) ++n;
  return id.substr(0, n);
}

}  // namespace

JobRecord read_job_record(const std::string& dir) {
  JobRecord r;
  std::error_code ec;
  r.dir = fs::absolute(dir, ec).lexically_normal().string();
  if (!r.dir.empty() && r.dir.size() > 1 && r.dir.back() == '/') r.dir.pop_back();
  if (!fs::is_directory(r.dir, ec)) {
    r.dir_exists = false;
    return r;
  }
  if (auto plan = read_json(fs::path(r.dir) / "plan.json")) {
    r.site = get_string(*plan, "site");
    r.scheduler = get_string(*plan, "scheduler");
    r.job_name = get_string(*plan, "job_name");
    if (auto it = plan->find("nodes"); it != plan->end() && it->is_number_integer()) r.nodes = it->get<int>();
    if (auto it = plan->find("command"); it != plan->end()) {
      if (it->is_array())
        for (const auto& a : *it)
          if (a.is_string()) r.command.push_back(a.get<std::string>());
    }
  }
  if (auto job = read_json(fs::path(r.dir) / "job.json")) {
    r.submitted = true;
    r.job_id = get_string(*job, "job_id");
    if (auto s = get_string(*job, "scheduler"); !s.empty()) r.scheduler = s;
    if (auto s = get_string(*job, "site"); !s.empty()) r.site = s;
    r.submitted_at = get_string(*job, "submitted_at");
    if (auto it = job->find("nodes"); it != job->end() && it->is_number_integer()) r.nodes = it->get<int>();
  }
  return r;
}

JobRecord resolve_job(const std::string& ref, const std::vector<std::string>& index) {
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
    if (r.dir_exists && r.job_id == ref) return r;
  }
  throw Error(ref, "is neither a job directory nor a job id listed by `hpclaunch jobs`",
              "run `hpclaunch jobs` for the list, or give the job directory's path");
}

std::optional<std::string> metrics_flag(const std::vector<std::string>& command) {
  std::optional<std::string> found;
  for (size_t i = 0; i < command.size(); ++i) {
    const std::string& a = command[i];
    if (a == "--metrics" && i + 1 < command.size()) found = command[++i];
    else if (a.rfind("--metrics=", 0) == 0) found = a.substr(10);
  }
  return found;
}

std::string metrics_path(const JobRecord& job, const std::string& cwd) {
  std::vector<fs::path> candidates;
  if (auto flag = metrics_flag(job.command)) {
    fs::path p(*flag);
    if (p.is_absolute()) {
      candidates.push_back(p);
    } else {
      // Default job directories are ./hpclaunch-jobs/NAME: the job ran where hpclaunch-jobs/ is.
      fs::path parent = fs::path(job.dir).parent_path();
      if (parent.filename() == "hpclaunch-jobs") candidates.push_back(parent.parent_path() / p);
      candidates.push_back(fs::path(job.dir) / p);
      candidates.push_back(fs::path(cwd) / p);
    }
  }
  candidates.push_back(fs::path(job.dir) / "metrics.jsonl");
  std::error_code ec;
  for (const auto& c : candidates)
    if (fs::exists(c, ec)) return c.lexically_normal().string();
  return candidates.front().lexically_normal().string();
}

std::vector<std::string> output_candidates(const JobRecord& job) {
  fs::path d(job.dir);
  std::vector<std::string> out;
  if (job.scheduler == "slurm" && !job.job_id.empty()) out.push_back((d / ("slurm-" + job.job_id + ".out")).string());
  if (job.scheduler == "pbs" && !job.job_id.empty()) {
    out.push_back((d / (job.job_id + ".OU")).string());
    if (!job.job_name.empty()) out.push_back((d / (job.job_name + ".o" + numeric_prefix(job.job_id))).string());
  }
  out.push_back((d / "output.log").string());
  return out;
}

}  // namespace hpclaunch
