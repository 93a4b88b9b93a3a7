// The list of jobs submitted from this machine: one job directory per line in
// ${XDG_STATE_HOME:-~/.local/state}/hpclaunch/jobs, appended by submit, read by `hpclaunch jobs`.
#pragma once
#include <string>
#include <vector>

namespace hpclaunch {

std::string job_index_path();
// Appends `job_dir` (one O_APPEND write: concurrent submits never interleave). Failure only warns the caller.
bool add_to_job_index(const std::string& job_dir, std::string* err);
// The job directories in submission order, skipping blank lines; empty when there is no index yet.
std::vector<std::string> read_job_index();

}  // namespace hpclaunch
