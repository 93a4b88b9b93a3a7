// The job directory: where submit leaves the rendered script (job.sh), the resolved plan (plan.json), the
// scheduler's job id (job.json) and the job's output. Written whole or not at all.
#pragma once
#include <string>
#include <utility>
#include <vector>

#include <nlohmann/json.hpp>

namespace hpclaunch {

// The directory for a new job: `requested` if given (it must not exist yet, or be empty), else
// ./hpclaunch-jobs/NAME-YYYYmmdd-HHMMSS[-N]. Pure apart from checking what exists.
std::string choose_job_dir(const std::string& requested, const std::string& job_name, const std::string& stamp);

// Creates `dir` with job.sh (mode 0755), plan.json and `files` (path relative to `dir` -> content: an array's
// tasks/I/task.json), by writing a temporary sibling and renaming it into place, so a failure leaves nothing
// half-written. Throws Error naming the directory.
void write_job_dir(const std::string& dir, const std::string& script, const nlohmann::json& plan,
                   const std::vector<std::pair<std::string, std::string>>& files = {});

// Adds job.json ({"job_id": ..., "scheduler": ..., "submitted_at": ...}) atomically.
void record_submission(const std::string& dir, const nlohmann::json& record);

// Removes a job directory written by write_job_dir (after the scheduler refused the job).
void remove_job_dir(const std::string& dir);

// "20261121-104500" for now (local time).
std::string timestamp_now();

}  // namespace hpclaunch
