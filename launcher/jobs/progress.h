// The one-line progress of `hpclaunch wait`: the job's queue state, then the trainer's step, loss, learning rate,
// throughput and last validation loss. Pure formatting; cmd_wait.cc redraws it in place on a terminal (\r) and
// prints it as a plain line per change otherwise.
#pragma once
#include <string>

#include "dialect/job_state.h"
#include "jobs/latest_records.h"

namespace hpclaunch {

struct Progress {
  std::string job_id;
  JobState state;
  LatestRecords latest;  // of the metrics file
  double elapsed_s = -1;  // since `wait` started; negative: not shown (plain lines print only changes)
};

// "1234 RUNNING 0:42 step 120 loss 0.0312 lr 1.00e-03 410 samples/s val 0.0298"; without records the state only.
// A run that stopped on a non-finite loss ends with "stopped: non-finite loss at step 7"; skipped steps are
// counted ("(3 skipped)").
std::string progress_line(const Progress& p);

// The same line, fitted to a terminal of `width` columns (cut, never wrapped: \r only redraws one line) and
// padded with spaces over what the previous, longer line left.
std::string terminal_line(const std::string& line, size_t width, size_t previous_length);

// "0:42", "12:03", "1:02:03".
std::string format_duration(double seconds);

}  // namespace hpclaunch
