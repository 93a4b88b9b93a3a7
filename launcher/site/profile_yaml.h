// Reads site profiles from YAML and checks them against the schema (docs/site-profiles.md). Every error names
// file:line:column and the field: unknown key (with "did you mean"), wrong type, bad value, missing field.
#pragma once
#include <functional>
#include <string>
#include <vector>

#include "site/profile.h"

namespace hpclaunch {

// One profile document as read, before `extends:` is resolved.
struct ProfileSource {
  std::string file;     // shown in messages: "site-profiles/perlmutter.yaml" or a user path
  std::string text;
};

// Finds an already-resolved profile by name for `extends:`; returns nullptr when there is none.
using ProfileLookup = std::function<const SiteProfile*(const std::string& name)>;

// Why a scheduler cannot start a launcher ("srun needs local or slurm"), or write a GPU request style, or "" when it
// can: the scheduler dialects' answers (dialect/dialect.h's scheduler_checks), handed down by the layers above this
// one, which know the dialects. An empty one: launch.allowed, or gpu_request.style, is not checked against the
// scheduler.
// One key of a scheduler's own block of a profile, as its dialect declares it (SchedulerDialect::profile_options).
struct SchedulerOptionSpec {
  std::string key;
  bool list = false;        // a list of texts, else one text
  bool whole_node = false;  // names a whole node's CPUs: a plan leaves it out on a queue that shares nodes
  std::optional<LaunchMode> launcher;  // the launcher whose ranks it binds: given only where the site allows it
  // What is wrong with one value and the fix, or {"", ""} when it is right.
  std::function<std::pair<std::string, std::string>(const std::string& value)> check = nullptr;
};

struct SchedulerChecks {
  std::function<std::string(Scheduler, LaunchMode)> launcher;
  std::function<std::string(Scheduler, GpuStyle)> gpu_style;
  std::function<std::string(Scheduler)> arrays;  // why `arrays: true` cannot be ("" when the scheduler has arrays)
  std::function<std::vector<SchedulerOptionSpec>(Scheduler)> options;  // the keys of its own block
};

// The profiles one document defines: its own and one per entry of `variants:`. Throws Error.
std::vector<SiteProfile> read_profiles(const ProfileSource& source, const ProfileLookup& lookup,
                                       const SchedulerChecks& checks = {});

// What a document defines and builds on, read before resolving (so a registry can order documents).
struct ProfileHeader {
  std::vector<std::string> names;  // its own name, then its variants'
  std::string extends;             // "" when it stands alone
};
ProfileHeader read_header(const ProfileSource& source);  // throws Error

// The resolved profile as YAML (what `hpclaunch sites show` prints); read_profiles() reads it back unchanged.
std::string profile_to_yaml(const SiteProfile& profile);

}  // namespace hpclaunch
