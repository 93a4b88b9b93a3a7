// The latest progress of a run, for `wait`'s line: the last records of a metrics file (metrics/records.h) that the
// trainer is still writing, read from the file's tail. (`plot` reads a whole file as curves: run_curves.h.)
#pragma once
#include <cstddef>
#include <optional>
#include <string>
#include <string_view>

#include "metrics/records.h"

namespace hpclaunch {

// The last complete step and validation records in the tail of a file being written (a partial last line, or any
// line that does not parse, is skipped: the trainer may be mid-write), and the run_end record when it is the last.
// A user's own log ({"step": N, "loss": ...} without "type", as `plot` reads it) counts as a step record too.
struct LatestRecords {
  std::optional<metrics::Step> step;
  bool has_loss = true;  // false: `step` came from a user log without a loss
  std::optional<metrics::Validation> validation;
  std::optional<metrics::RunEnd> end;
};
LatestRecords latest_records(std::string_view tail);

// The last `max_bytes` of a file (empty when it does not exist yet).
std::string read_file_tail(const std::string& path, size_t max_bytes);

}  // namespace hpclaunch
