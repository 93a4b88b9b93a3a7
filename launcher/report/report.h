// `hpclaunch report`: how a job went, as one self-contained HTML page (inline CSS and SVG, no scripts, nothing
// fetched) and as JSON. ReportFacts holds what the job directory, the metrics file and the scheduler say, read by
// gather.cc through the readers each file already has; everything else here is pure: facts in, text out.
#pragma once
#include <optional>
#include <string>
#include <vector>

#include "agent/failure.h"
#include "dialect/job_state.h"
#include "jobs/run_curves.h"
#include "plot/panels.h"
#include "record/job_record.h"

namespace hpclaunch {

// One thing that happened to the job, in the order it happened: a run (attempt) and how it ended, a hang, a spare
// taking a lost node's place, a node left out, the root cause of a failure.
struct TimelineEvent {
  std::optional<double> wall_s;  // seconds since the metrics file's first record; nullopt: not known
  std::optional<int> run;        // the run (0 the first) it belongs to
  std::string kind;              // "run", "requeue", "restart", "hang", "spare", "excluded", "failure", "end"
  std::string what;              // one line
  std::string detail;            // more lines (a worker's last stderr, where the stacks are), or ""
};

// One rank's last lines in the job's output (the agent's "[host:R] " or srun -l's "R: " prefix) and its exit.
struct RankFacts {
  int rank = 0;
  std::vector<std::string> last_lines;
  std::string exit;  // "exited with code 1", "exited 0 (the job completed)", "not recorded"
};

// One task of an array, for the table of tasks.
struct TaskFacts {
  int task = 0;
  std::string job_id, label;
  JobState state;
  std::vector<SweepValue> values;
  std::optional<Point> best_validation;  // nullopt: no validation (or no metrics) yet
  long long steps = -1;                  // -1: no metrics file yet
  std::string page;                      // the task's own page, relative to the array's
};

struct ReportFacts {
  std::string job_id, job_dir, site, scheduler, submitted_at;
  JobState state;
  std::optional<SnapshotRecord> snapshot;  // job.json's: the code the job runs (submit --snapshot)
  std::optional<PlanFile> plan;       // the request as planned (plan.json)
  std::string script;                 // job.sh, as submitted
  std::vector<TimelineEvent> timeline;
  std::string output_file;            // "" when the job has no output yet
  std::vector<RankFacts> ranks;
  std::string metrics_file;           // where the metrics are (or would be)
  bool metrics_found = false;         // the metrics file is there (its curves may still be unreadable)
  std::optional<RunCurves> curves;    // nullopt: none yet (metrics_note says why)
  std::string metrics_note;
  std::optional<PreflightReport> preflight;  // nullopt: no preflight ran (preflight.json absent)
  std::vector<ExcludedNode> excluded;
  std::vector<std::pair<std::string, std::string>> usage;  // what the scheduler says the job used
  std::string usage_note;             // why `usage` is empty, or what it leaves out
  std::vector<std::string> keys;      // an array's swept keys
  std::vector<TaskFacts> tasks;       // an array's tasks (empty for a single job)
  bool is_array() const { return !tasks.empty(); }
};

// The timeline from the metrics file's runs, the agents' words (hangs, spares' places, failure.json) and the nodes
// left out. `failure` is failure.json's (nullopt: none); `running`: the job has not ended.
std::vector<TimelineEvent> make_timeline(const std::vector<RunSpan>& runs, const std::vector<std::string>& hangs,
                                         const std::vector<std::string>& replaced,
                                         const std::vector<ExcludedNode>& excluded,
                                         const std::optional<Failure>& failure, const JobState& state);

// Each rank's last `keep` lines of `output` (lines without a rank are the script's own and left out), with its
// exit: the failure's for the rank it blames, 0 when the job completed, else what the agents logged of it ("worker
// failed: rank 3 ... exited with code 7": each node's first failed worker), else "not recorded".
std::vector<RankFacts> rank_facts(const std::string& output, size_t keep, const std::optional<Failure>& failure,
                                  const JobState& state);

// The width of a chart's plot area in pixels: curves are thinned to it, on the page and in `report --json`.
inline constexpr size_t k_report_curve_columns = 640;

// A series of at most about 2 * `columns` points that draws as `s` does at that width over x_min..x_max: per
// column its lowest and highest value, in order. Non-finite values are kept (they are the gaps).
Series thin_series(const Series& s, double x_min, double x_max, size_t columns);

// Text safe inside HTML elements and attribute values: & < > " ' as entities.
std::string html_escape(const std::string& text);

// The page: request and plan, script, timeline, ranks, curves, preflight, the scheduler's accounting; an array's
// table of tasks, each linked to its page.
std::string report_html(const ReportFacts& facts);

}  // namespace hpclaunch
