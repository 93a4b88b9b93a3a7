// Batch split, learning-rate scaling and the warm-up + cosine schedule: see schedule.h.
#include "schedule.h"

#include <algorithm>
#include <cmath>

#include "util/error.h"

namespace hpctrain {

bool parse_lr_scaling(const std::string& text, LrScaling* out) {
  if (text == "none") *out = LrScaling::none;
  else if (text == "linear") *out = LrScaling::linear;
  else if (text == "sqrt") *out = LrScaling::sqrt;
  else return false;
  return true;
}

bool parse_lr_decay(const std::string& text, LrDecay* out) {
  if (text == "cosine") *out = LrDecay::cosine;
  else if (text == "constant") *out = LrDecay::constant;
  else return false;
  return true;
}

BatchPlan plan_batch(int64_t global_batch, int64_t local_batch, int64_t base_batch, int world_size) {
  using hpclaunch::Error;
  BatchPlan plan;
  if (global_batch > 0) {
    if (global_batch % world_size != 0)
      throw Error("--global-batch-size", std::to_string(global_batch) + " does not split evenly over " +
                                             std::to_string(world_size) + " ranks",
                  "use a multiple of WORLD_SIZE=" + std::to_string(world_size));
    plan.global_batch = global_batch;
    plan.local_batch = global_batch / world_size;
  } else if (local_batch > 0) {
    plan.local_batch = local_batch;
    plan.global_batch = local_batch * world_size;
  } else {
    throw Error("--batch-size", "no batch size", "pass --batch-size N (per rank) or --global-batch-size N");
  }
  plan.base_batch = base_batch > 0 ? base_batch : plan.global_batch;
  return plan;
}

double scaled_lr(double base_lr, LrScaling scaling, int64_t global_batch, int64_t base_batch) {
  const double ratio = static_cast<double>(global_batch) / static_cast<double>(base_batch);
  switch (scaling) {
    case LrScaling::linear: return base_lr * ratio;
    case LrScaling::sqrt: return base_lr * std::sqrt(ratio);
    case LrScaling::none: break;
  }
  return base_lr;
}

double LrSchedule::at(int64_t step) const {
  if (step < warmup_steps) return peak_lr * static_cast<double>(step + 1) / static_cast<double>(warmup_steps);
  if (decay == LrDecay::constant) return peak_lr;
  const int64_t span = std::max<int64_t>(total_steps - warmup_steps, 1);
  const double progress = std::min(1.0, static_cast<double>(step - warmup_steps) / static_cast<double>(span));
  return min_lr + 0.5 * (peak_lr - min_lr) * (1.0 + std::cos(M_PI * progress));
}

}  // namespace hpctrain
