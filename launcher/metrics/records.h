// The records of hpclaunch-train's metrics file (--metrics, one JSON object per line), defined once: the trainer
// writes them (to_line) and its --resume trimming, `hpclaunch wait`, `plot` and `report` read them (parse_line):
// written through nlohmann-json, read by a reader of plain flat lines (the common case) or else nlohmann-json's
// SAX interface, both keeping only the top-level fields. A number that is not finite is written as null and read
// back as NaN, so the file stays JSON whatever the run does. C++17 (the trainer's Torch 1.13 headers include this).
#pragma once
#include <cstdint>
#include <limits>
#include <optional>
#include <string>
#include <string_view>
#include <utility>
#include <variant>
#include <vector>

namespace hpclaunch::metrics {

inline constexpr double k_nan = std::numeric_limits<double>::quiet_NaN();

// {"type":"step",...}: one optimizer step (or a skipped one), rank 0.
struct Step {
  int64_t epoch = 0;
  int64_t step = 0;
  double loss = 0;           // mean over ranks; NaN when not finite on some rank (null in the file)
  double lr = 0;
  double samples_per_s = 0;  // global batch over step_time_s
  double step_time_s = 0;    // wall time from the step's start to the next step's (hpclaunch-train: docs/trainer.md)
  double allreduce_s = 0;    // waiting for gradient allreduces after backward
  double data_wait_s = 0;    // waiting for the step's batch from the input path (docs/trainer.md)
  double cpu_s = 0;          // process CPU time (all threads) during the step
  std::optional<double> time;    // Unix seconds when written (TensorBoard's wall_time)
  std::optional<double> wall_s;  // seconds since the run's start, for files without "time" (other writers)
  bool skipped = false;          // --on-nonfinite skip-step: no optimizer step was taken (written only when true)
};

// {"type":"validation",...}: the validation loss after a step.
struct Validation {
  int64_t epoch = 0;
  int64_t step = 0;
  double val_loss = 0;  // NaN when not finite
  double time_s = 0;    // how long validation took
  std::optional<double> time;
  std::optional<double> wall_s;
};

// {"type":"run_start",...}: a run (or a resumed run) begins at `step`.
struct RunStart {
  int64_t step = 0;  // the checkpoint's step when resuming, else 0
  std::string model;
  int64_t world_size = 1;
  int64_t global_batch = 0;
  std::string on_nonfinite;  // stop | skip-step
  std::optional<double> time;
};

// {"type":"run_end",...}: how a run ended. status: "done", "stopped" (a signal: requeue), "nonfinite".
struct RunEnd {
  int64_t step = 0;  // steps taken (skipped ones included)
  std::string status;
  int exit_code = 0;
  int64_t skipped_steps = 0;
  // status "nonfinite": the first step with a non-finite loss, the ranks where it was, the last finite loss.
  std::optional<int64_t> nonfinite_step;
  std::vector<int> nonfinite_ranks;
  std::optional<int64_t> last_finite_step;
  double last_finite_loss = k_nan;
  std::optional<double> time;
};

// A line of someone else's log: no "type", a numeric "step" and other fields. Numbers (null: NaN) in the order
// they appear in the line; other values (strings, objects) are left out.
struct UserRecord {
  int64_t step = 0;
  std::vector<std::pair<std::string, double>> values;
};

// A JSON object that is none of the above (a record type this reader does not know, or no step): kept, not read.
struct OtherRecord {
  std::string type;
  std::optional<int64_t> step;
};

using Record = std::variant<Step, Validation, RunStart, RunEnd, UserRecord, OtherRecord>;

// The record as one line of JSON, "type" first, ending in '\n'. Non-finite numbers are written as null.
std::string to_line(const Record& record);

// The record in one line (without its newline); nullopt when the line is not a JSON object. Python's NaN,
// Infinity and -Infinity (json.dumps writes them) read as null. A typed record that
// lacks a required field (a step's "step" or "loss", a validation's "val_loss") throws hpclaunch::Error naming
// `where` when `where` is given, and reads as an OtherRecord when it is empty (readers of a file being written).
std::optional<Record> parse_line(std::string_view line, const std::string& where = {});

// The record's "step", when it has one.
std::optional<int64_t> step_of(const Record& record);

}  // namespace hpclaunch::metrics
