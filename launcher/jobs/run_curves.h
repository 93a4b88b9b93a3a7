// A run's curves: a whole metrics file read for `plot` (and `plot`'s sweep table) as one series per field, with
// marks where it went non-finite. The file is hpclaunch-train's records (metrics/records.h) or a user's own
// JSON-lines log (objects with a numeric "step" and no "type", as most Python training scripts write), read
// whole and strictly. (`wait` reads only the latest records of a file still being written: latest_records.h.)
#pragma once
#include <string>
#include <string_view>
#include <vector>

namespace hpclaunch {

struct Point {
  long long step = 0;
  double wall_s = 0;  // seconds since the first record's "time" (Unix seconds); else "wall_s"; else the sum of step times
  double value = 0;   // NaN: not finite (null in the file), drawn as a gap
};

struct Curve {
  std::string field;  // "loss", "val_loss", "lr", "samples_per_s", or a user log's field
  std::vector<Point> points;
};

// Where a run went non-finite: a step whose loss was not finite, a skipped step, the step a run stopped at.
struct Mark {
  long long step = 0;
  double wall_s = 0;
  std::string what;  // "non-finite loss", "step skipped", ...
};

// One run of hpclaunch-train in the file: from its run_start record to its run_end, if it wrote one (a run killed,
// or still going, has none). A restart or requeue resumes from a checkpoint and starts another.
struct RunSpan {
  long long start_step = 0;  // the checkpoint's step when resumed
  double start_wall_s = 0;
  long long end_step = -1;   // -1: no step record yet
  double end_wall_s = 0;     // the last record's of the run
  std::string status;        // run_end's: "done", "stopped" (a signal: requeue), "nonfinite"; "" without run_end
  int exit_code = 0;
  int world_size = 0;
};

struct RunCurves {
  std::string path;
  bool user_log = false;     // records without "type" (someone else's log)
  std::vector<Curve> curves; // hpclaunch-train: loss, lr, samples_per_s, val_loss; a user log: its numeric fields
  std::vector<Mark> marks;
  std::vector<RunSpan> runs;  // hpclaunch-train's runs in file order (none for a user log)
  std::vector<std::string> not_drawn;  // a user log's numeric fields that are counters or clocks (epoch, time, ...)
  // The curve of `field`, or nullptr.
  const Curve* curve(std::string_view field) const;
};

// A user log's field names for the four standard curves: "train_loss" -> "loss", "learning_rate" -> "lr",
// "eval_loss" -> "val_loss", ... Other names are returned unchanged.
std::string canonical_field(const std::string& field);

// Parses a whole metrics file's text. Records a resumed run repeats (a step not after the previous one) replace
// the earlier ones from that step on; wall time keeps counting the time both runs spent (with "time" stamps, the
// wait between them too). Throws Error naming `path:LINE` for a line that is not JSON, a step without
// "step" or "loss", a last line cut short; and naming `path` when it is empty or holds no step record.
RunCurves parse_run_curves(std::string_view text, const std::string& path);

// Reads and parses the file; a missing or unreadable file throws Error naming it.
RunCurves read_run_curves(const std::string& path);

}  // namespace hpclaunch
