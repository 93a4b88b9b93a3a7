// The metrics file (--metrics, JSON lines) across restarts. A run that was killed after its last checkpoint wrote
// records for steps that the next run trains again; on resume those records go, so every step is in the file
// once and the file agrees with the checkpoint (as TensorBoard's purge_step).
#pragma once
#include <cstdint>
#include <string>

namespace hpctrain {

// The lines of `text` to keep when resuming at `step`: records whose "step" is at most `step`, lines without a
// step, and no unterminated last line (a record cut off by a kill). Lines are read as metrics/records.h says.
std::string metrics_up_to(const std::string& text, int64_t step);

// Rewrites `path` (atomically) to metrics_up_to(its text, step); returns how many lines went. No file: 0.
int truncate_metrics_file(const std::string& path, int64_t step);

}  // namespace hpctrain
