// The report's effects: a job's facts read from its directory, its metrics file and its output through the readers
// each file has (record/job_record.h, jobs/run_curves.h, agent/failure.h, jobs/log_filter.h), and its state asked
// of its scheduler through `run`. Pure rendering: report.h.
#pragma once
#include <functional>
#include <string>

#include "report/report.h"
#include "scheduler/backend.h"

namespace hpclaunch {

// At most this many threads read an array's tasks (and draw their pages), one a core.
inline constexpr size_t k_report_threads = 4;

// How many of each rank's last lines the report keeps.
inline constexpr size_t k_report_rank_lines = 8;

// The facts of one job, or of one task of an array (task_record). A metrics file that cannot be read leaves the
// curves out with the reason in metrics_note; a job still running is read as it stands (a last metrics line being
// written is left for the next look). `state` and `usage`: the job's state and what its scheduler's accounting
// says (SchedulerBackend::usage) when the caller asked already (an array's tasks, all in one question); else they
// are asked through `run`.
ReportFacts gather_report(const JobRecord& job, const std::string& cwd, const CommandRunner& run,
                          std::optional<JobState> state = std::nullopt, std::optional<JobUsage> usage = std::nullopt);

// The facts of an array job: the array's plan and script, and a row per task (its state from one question for all
// of them, its best validation loss from its metrics file); each row's `page` is tasks/I/report.html, relative to
// the array's job directory. `each_task`, when given, gets each task's own facts (gather_report's, its state from
// that one question) and its row (which it may change: the page's path): each metrics file is read once, and only
// a task's curves a thread are held at a time. The tasks are read on up to k_report_threads threads, so `each_task`
// is called from several at once, each time for another task; the rows are in task order all the same.
ReportFacts gather_array_report(const JobRecord& array, const std::string& cwd, const CommandRunner& run,
                                const std::function<void(const ReportFacts&, TaskFacts*)>& each_task = {});

}  // namespace hpclaunch
