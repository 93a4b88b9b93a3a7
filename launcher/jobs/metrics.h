// Reading hpclaunch-train's --metrics file: one JSON object per line, {"type":"step",...} per step and
// {"type":"validation",...} per validation (trainer/trainer.cc, MetricsFile). `plot` reads it whole and strictly;
// `wait` reads the latest records of a file still being written.
#pragma once
#include <optional>
#include <string>
#include <string_view>
#include <vector>

namespace hpclaunch {

struct StepRecord {
  long long step = 0;
  double loss = 0, lr = 0, samples_per_s = 0;
  double wall_s = 0;  // seconds since the first record's "time" (Unix seconds); else "wall_s"; else the sum of step times
};

struct ValidationRecord {
  long long step = 0;
  double val_loss = 0;
  double wall_s = 0;
};

struct Metrics {
  std::string path;
  std::vector<StepRecord> steps;
  std::vector<ValidationRecord> validations;
};

// Parses a whole metrics file's text. Records a resumed run repeats (a step not after the previous one) replace
// the earlier ones from that step on; wall time keeps counting the time both runs spent (with "time" stamps, the
// wait between them too). Throws Error naming `path:LINE` for a line that is not JSON, a step without
// "step" or "loss", a last line cut short; and naming `path` when it is empty or holds no step record.
Metrics parse_metrics(std::string_view text, const std::string& path);

// Reads and parses the file; a missing or unreadable file throws Error naming it.
Metrics read_metrics(const std::string& path);

// The last complete step and validation records in the tail of a file being written (a partial last line, or any
// line that does not parse, is skipped: the trainer may be mid-write).
struct LatestMetrics {
  std::optional<StepRecord> step;
  std::optional<ValidationRecord> validation;
};
LatestMetrics latest_metrics(std::string_view tail);

// The last `max_bytes` of a file (empty when it does not exist yet).
std::string read_file_tail(const std::string& path, size_t max_bytes);

}  // namespace hpclaunch
