// Reporting a run: the --metrics file (rank 0) and rank 0's progress and end lines. Internal to hpclaunch-train
// (run.h).
#pragma once
#include <cstdint>
#include <string>
#include <vector>

#include "metrics/records.h"
#include "metrics_writer.h"
#include "run.h"
#include "step.h"
#include "step_policy.h"

namespace hpctrain {

// Seconds since the Unix epoch (TensorBoard's wall_time): `hpclaunch plot` measures wall time from the first record.
double unix_time();

// Where a step's time went, as its record says (metrics/records.h): wall time from its start to the next step's,
// the process's CPU time in it, and the part of the wall time spent waiting for its batch (BatchLoader::next).
struct StepTimes {
  double wall_s = 0;
  double cpu_s = 0;
  double data_wait_s = 0;
};

class Reporter {
 public:
  explicit Reporter(const Run& run);

  void run_start();
  void step(int64_t step_number, int64_t batch_index, double lr, const StepResult& r, StepAction action,
            const NonfiniteTracker& tracker, const std::vector<int>& bad_ranks, const StepTimes& times);
  void validation(double val_loss, double seconds);
  // One line, rank 0: the step, the ranks, the last finite loss; nothing was saved.
  void nonfinite_end(hpclaunch::metrics::RunEnd end, const NonfiniteTracker& tracker);
  // Said before the barrier: once one rank exits 99, `srun --kill-on-bad-exit` may end the others.
  void stopped_end(const hpclaunch::metrics::RunEnd& end);
  void replicas(double deviation);
  void done_end(const hpclaunch::metrics::RunEnd& end, int64_t skipped);

 private:
  const Run& m_run;
  MetricsWriter m_writer;
  Clock::time_point m_start = Clock::now();
  Clock::time_point m_window_start = Clock::now();
  int64_t m_window_steps = 0;
  int64_t m_trained_samples = 0;
  double m_train_seconds = 0.0;
};

// Records a killed run wrote after its last checkpoint: those steps are trained again now (rank 0, on resume).
void trim_metrics_on_resume(const Run& run);

}  // namespace hpctrain
