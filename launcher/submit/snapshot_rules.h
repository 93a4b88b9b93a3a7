// submit --snapshot's decisions, pure: the settings from flags, spec and profile; which paths a snapshot leaves out;
// whether it is too large, and the one line that says so; whether a git tree differs from its commit; where in the
// copy the job starts. The effects (running git, walking, copying) are submit/snapshot.h's.
#pragma once
#include <cstdint>
#include <string>
#include <string_view>
#include <vector>

#include "plan/plan.h"
#include "site/profile.h"
#include "util/ignore_rules.h"

namespace hpclaunch {

inline constexpr std::uint64_t k_default_snapshot_max_bytes = std::uint64_t{256} << 20;

struct SnapshotSettings {
  bool on = false;
  std::vector<std::string> exclude;  // gitignore patterns from the tree's top: the profile's, then the request's
  std::uint64_t max_bytes = k_default_snapshot_max_bytes;
  std::string max_origin;            // who set max_bytes: "--snapshot-max-size", a spec's FILE:LINE, the profile
};

// The request's (--snapshot, --snapshot-exclude, --snapshot-max-size, or the spec's keys) over the profile's
// (snapshot, snapshot_exclude, snapshot_max_size). Throws Error naming the flag for a size that is not one.
SnapshotSettings snapshot_settings(const JobRequest& request, const SiteProfile& site);

// What every snapshot leaves out beside the settings' patterns: git's own folder, and hpclaunch's job folders
// (the default ./hpclaunch-jobs, whose snapshots would otherwise be copied into every later one).
IgnoreRules snapshot_excludes(const SnapshotSettings& settings);

// One file or symbolic link of a snapshot, relative to its root.
struct SnapshotEntry {
  std::string path;
  std::uint64_t bytes = 0;  // 0 for a link
  bool symlink = false;
};

// "" when `entries` fit the limit; else the one line that refuses them: their size, the largest top-level entries
// (a folder's files summed) and the two fixes.
std::string snapshot_size_refusal(const std::vector<SnapshotEntry>& entries, const SnapshotSettings& settings,
                                  const std::string& root);

// git's NUL-separated lists (`ls-files -z`): the paths in order, empty ones dropped.
std::vector<std::string> split_nul(std::string_view text);

// Whether `git status --porcelain -z` says the tree differs from its commit in a path the snapshot keeps (an
// untracked job folder does not make it dirty).
bool porcelain_dirty(std::string_view porcelain_z, const IgnoreRules& excludes);

// Where the job starts: the submit directory `cwd`'s place under `root`, in the copy `snapshot_dir`.
std::string snapshot_workdir(const std::string& snapshot_dir, const std::string& root, const std::string& cwd);

}  // namespace hpclaunch
