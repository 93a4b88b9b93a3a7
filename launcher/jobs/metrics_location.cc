#include "jobs/metrics_location.h"

#include <filesystem>

namespace hpclaunch {

namespace fs = std::filesystem;

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

}  // namespace hpclaunch
