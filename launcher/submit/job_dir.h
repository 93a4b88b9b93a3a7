// The job directory: where submit leaves the rendered script (job.sh), the resolved plan (plan.json), the
// scheduler's job id (job.json) and the job's output. Written whole or not at all.
#pragma once
#include <sys/types.h>

#include <ctime>
#include <functional>
#include <string>
#include <utility>
#include <vector>

#include <nlohmann/json.hpp>

namespace hpclaunch {

// Job directories are readable by their owner only unless the user says otherwise (--job-dir-mode).
inline constexpr mode_t k_default_job_dir_mode = 0700;

// The directory for a new job: `requested` if given (it must not exist yet, or be empty), else
// ./hpclaunch-jobs/NAME-YYYYmmdd-HHMMSS[-N]. Pure apart from checking what exists.
std::string choose_job_dir(const std::string& requested, const std::string& job_name, const std::string& stamp);

// The same choice, made safe against other submits at the same moment: the directory is created empty (mkdir,
// which only one process wins), so two submits never get the same one; a name taken meanwhile moves on to the
// next -N. Throws Error when it cannot be created.
std::string reserve_job_dir(const std::string& requested, const std::string& job_name, const std::string& stamp);

// --job-dir-mode: an octal mode such as 700 or 0750 that lets the owner read, write and enter. Throws Error.
mode_t parse_job_dir_mode(const std::string& text);

// Fills `dir` (empty, reserved by reserve_job_dir, or absent) with job.sh (mode 0755), plan.json and `files`
// (path relative to `dir` -> content: an array's tasks/I/task.json), and whatever `fill` puts into the folder it
// is given (the snapshot), by writing a temporary sibling of `mode` and renaming it into place, so a failure
// leaves nothing half-written. Throws Error naming the directory (or what `fill` throws).
void write_job_dir(const std::string& dir, const std::string& script, const nlohmann::json& plan,
                   const std::vector<std::pair<std::string, std::string>>& files = {},
                   mode_t mode = k_default_job_dir_mode,
                   const std::function<void(const std::string&)>& fill = {});

// Adds job.json ({"job_id": ..., "scheduler": ..., "submitted_at": ...}) atomically.
void record_submission(const std::string& dir, const nlohmann::json& record);

// Removes a job directory written by write_job_dir (after the scheduler refused the job).
void remove_job_dir(const std::string& dir);

// "20261121-104500" for now (local time).
std::string timestamp_now();
// A moment as RFC 3339 in local time with its UTC offset ("2026-11-21T10:45:00+01:00"); job.json's submitted_at is
// submitted_now(). (Records written before it hold "20261121-104500", local time without a zone.)
std::string rfc3339(std::time_t t);
std::string submitted_now();

}  // namespace hpclaunch
