// `hpclaunch sites check`: a profile compared with what its live scheduler says (survey/cluster_info.h), one row
// per fact with a verdict and the fix. Pure.
#pragma once
#include <string>
#include <vector>

#include <nlohmann/json_fwd.hpp>

#include "site/profile.h"
#include "survey/cluster_info.h"

namespace hpclaunch {

enum class Verdict { ok, mismatch, unknown };
const char* to_string(Verdict v);

struct CheckRow {
  std::string item;     // "partition gpu", "node.cores", ...
  std::string profile;  // what the profile says
  std::string cluster;  // what the scheduler says
  Verdict verdict = Verdict::ok;
  bool fatal = false;   // a mismatch that would make a job fail or land where it should not
  std::string fix;
};

std::vector<CheckRow> check_profile(const SiteProfile& profile, const ClusterInfo& cluster);

// True if any row is a fatal mismatch (`sites check` then exits 1).
bool has_fatal(const std::vector<CheckRow>& rows);

// The table `sites check` prints, and its --json form.
std::string format_check(const std::vector<CheckRow>& rows);
nlohmann::json check_to_json(const std::string& site, const std::vector<CheckRow>& rows);

}  // namespace hpclaunch
