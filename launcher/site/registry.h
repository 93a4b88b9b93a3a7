// All the site profiles one invocation can see: the built-in ones (compiled in from site-profiles/), then
// $XDG_CONFIG_HOME/hpclaunch/sites/*.yaml, then each --site-file. A later profile of the same name replaces an
// earlier one; `extends: NAME` builds on whatever NAME is at that point.
#pragma once
#include <map>
#include <string>
#include <vector>

#include "site/profile.h"
#include "site/profile_yaml.h"

namespace hpclaunch {

class SiteRegistry {
 public:
  // `checks`: each profile's launch.allowed and gpu_request.style against its scheduler (dialect/dialect.h's
  // scheduler_checks).
  explicit SiteRegistry(SchedulerChecks checks = {}) : m_checks(std::move(checks)) {}
  // Adds the profiles of these documents. Within one call documents may extend each other in any order.
  void add(const std::vector<ProfileSource>& sources);

  // The profile, or an Error naming `flag` with "did you mean".
  const SiteProfile& get(const std::string& name, const std::string& flag = "--site") const;
  const SiteProfile* find(const std::string& name) const;
  std::vector<const SiteProfile*> all() const;  // sorted by name

 private:
  SchedulerChecks m_checks;
  std::map<std::string, SiteProfile> m_profiles;
};

// The built-in documents (site-profiles/*.yaml as compiled in).
std::vector<ProfileSource> builtin_profile_sources();
// Documents from the user's directory (XDG) and the given --site-file paths. Reads files: an effect.
std::vector<ProfileSource> user_profile_sources(const std::vector<std::string>& site_files);
// Only the built-in profiles.
SiteRegistry builtin_sites(const SchedulerChecks& checks = {});
// The registry every command uses: built-ins, user directory, --site-file; every profile's launchers and GPU style
// checked by `checks` (the commands pass scheduler_checks(), from the layer that knows the schedulers).
SiteRegistry load_sites(const std::vector<std::string>& site_files, const SchedulerChecks& checks);

}  // namespace hpclaunch
