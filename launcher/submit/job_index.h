// The list of jobs submitted from this machine: one JobIndexEntry per line (a JSON object) in
// ${XDG_STATE_HOME:-~/.local/state}/hpclaunch/jobs, appended by submit, read by `hpclaunch jobs`. A line that is no
// JSON object is a job directory as indexes written before the entries were JSON have it.
// Writers (an append, a prune) hold an exclusive lock on jobs.lock beside it, so many submits at once each add
// their own line; a prune rewrites the index to a temporary file renamed over it. A writer killed mid-line leaves
// an unterminated tail: readers skip it, and the next writer cuts it off before appending.
#pragma once
#include <functional>
#include <string>
#include <string_view>
#include <vector>

namespace hpclaunch {

// One line of the index, written and read through nlohmann (job_index.cc).
struct JobIndexEntry {
  std::string dir;  // the job directory
};
// Its line, '\n' included.
std::string index_line(const JobIndexEntry& e);

std::string job_index_path();
// Appends `job_dir` under the lock. Failure only warns the caller.
bool add_to_job_index(const std::string& job_dir, std::string* err);
// The job directories in submission order, skipping blank lines; empty when there is no index yet.
std::vector<std::string> read_job_index();
// Rewrites the index without the entries `keep` refuses (order kept), atomically and under the lock; returns the
// entries dropped. Throws Error naming the index when it cannot be rewritten.
std::vector<std::string> prune_job_index(const std::function<bool(const std::string& dir)>& keep);

// Pure: the entries of an index text (complete lines only: a last line without '\n' is a write in progress or one
// killed half-way), and how many leading bytes are complete lines.
std::vector<std::string> parse_job_index(std::string_view text);
size_t complete_lines_size(std::string_view text);

}  // namespace hpclaunch
