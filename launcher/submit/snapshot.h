// submit --snapshot's effects: list what a snapshot holds (git, or a walk of the directory with its .gitignore
// files), check that each file can be read and that it all fits the limit, and copy it into the job directory.
// The decisions are submit/snapshot_rules.h's.
#pragma once
#include <string>
#include <vector>

#include "record/job_record.h"
#include "scheduler/backend.h"
#include "submit/snapshot_rules.h"

namespace hpclaunch {

struct SnapshotSource {
  std::string root;  // absolute: a git work tree's top, else the submit directory
  std::string cwd;   // the submit directory (absolute)
  bool git = false;
  std::string commit;  // HEAD ("" outside git, or before the first commit)
  bool dirty = false;
  std::vector<SnapshotEntry> entries;
  std::vector<std::string> warnings;  // what was left out and why (a submodule)
  std::string origin;  // where it was taken when that was elsewhere (submit --remote: the laptop's HOST:PATH)
};

// Lists the snapshot of `cwd` (running git through `run`): in a git work tree its tracked files as they are now and
// its untracked, not ignored ones (`git ls-files --cached --others --exclude-standard`), else every file under
// `cwd` that no .gitignore names; less `settings.exclude`, hpclaunch's job folders and `job_dir`. Throws Error
// (nothing written) for a file that cannot be read, naming it, and for a snapshot over the limit.
SnapshotSource list_snapshot(const SnapshotSettings& settings, const std::string& cwd, const std::string& job_dir,
                             const CommandRunner& run);

// A snapshot taken elsewhere and sent here (submit --remote: on the laptop): DIR/tree holds its files and
// DIR/origin.json (prepared_origin_json) lists them and says where they came from. The listed files are taken as
// they are (the laptop applied .gitignore and the excludes), checked against `settings`' limit. Throws Error naming
// DIR when it holds no such snapshot.
SnapshotSource prepared_snapshot(const std::string& dir, const SnapshotSettings& settings);
// origin.json's text for `source`, taken on `host` (its files, the start directory within them, git, commit, dirty).
std::string prepared_origin_json(const SnapshotSource& source, const std::string& host);

// Copies the listed files into `dest` (created): modes kept, symbolic links as links; makes the job's start
// directory too. Throws Error naming the file that could not be copied.
void copy_snapshot(const SnapshotSource& source, const std::string& dest);

// JOBDIR/snapshot: where a job's snapshot is copied to.
inline std::string snapshot_dir(const std::string& job_dir) { return job_dir + "/snapshot"; }

// job.json's record of a snapshot copied to `dest`.
SnapshotRecord snapshot_record(const SnapshotSource& source, const std::string& dest);

}  // namespace hpclaunch
