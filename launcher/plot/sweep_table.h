// The table `hpclaunch plot` prints for an array job: each task's values beside its best validation loss (and the
// step it came at) and its last training loss, the best task marked. Pure.
#pragma once
#include <optional>
#include <string>
#include <utility>
#include <vector>

#include "jobs/run_curves.h"

namespace hpclaunch {

struct TaskResult {
  int task = 0;
  std::vector<std::pair<std::string, std::string>> values;  // key -> value, as swept
  std::optional<RunCurves> curves;                            // nullopt: the task wrote no metrics file (yet)
};

// The lowest finite validation loss of a run and its step; nullopt without one.
std::optional<Point> best_validation(const RunCurves& m);

// "TASK  lr  bs  BEST VAL LOSS  AT STEP  LAST LOSS  STEPS" and a row per task; "-" where a task has no such
// record; "<- best" after the lowest validation loss.
std::string best_validation_table(const std::vector<std::string>& keys, const std::vector<TaskResult>& tasks);

}  // namespace hpclaunch
