// The metrics file (--metrics, JSON lines): written as the run goes (MetricsWriter), and across restarts. A run
// that was killed after its last checkpoint wrote records for steps that the next run trains again; on resume
// those records go, so every step is in the file once and the file agrees with the checkpoint (as TensorBoard's
// purge_step).
#pragma once
#include <cstdint>
#include <cstdio>
#include <string>

#include "metrics/records.h"

namespace hpctrain {

// The --metrics file being written: one record (metrics/records.h) per line, appended and flushed as written.
// An empty path writes nothing (ranks other than 0). A file that cannot be opened throws hpclaunch::Error
// naming --metrics.
class MetricsWriter {
 public:
  explicit MetricsWriter(const std::string& path);
  ~MetricsWriter();
  MetricsWriter(const MetricsWriter&) = delete;
  MetricsWriter& operator=(const MetricsWriter&) = delete;
  // A line per record for whoever follows the file (a few microseconds).
  void write(const hpclaunch::metrics::Record& record);

 private:
  std::FILE* m_file = nullptr;
};

// The lines of `text` to keep when resuming at `step`: records whose "step" is at most `step`, lines without a
// step, and no unterminated last line (a record cut off by a kill). Lines are read as metrics/records.h says.
std::string metrics_up_to(const std::string& text, int64_t step);

// Rewrites `path` (atomically) to metrics_up_to(its text, step); returns how many lines went. No file: 0.
int truncate_metrics_file(const std::string& path, int64_t step);

}  // namespace hpctrain
