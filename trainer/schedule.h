// Seed 001's batch rules: the global batch split over ranks, learning-rate scaling from the base batch
// (none | linear | sqrt), then linear warm-up and cosine decay. Pure arithmetic, no Torch.
#pragma once
#include <cstdint>
#include <string>

namespace hpctrain {

enum class LrScaling { none, linear, sqrt };
enum class LrDecay { cosine, constant };

// Parses "none" | "linear" | "sqrt"; false when unknown.
bool parse_lr_scaling(const std::string& text, LrScaling* out);
bool parse_lr_decay(const std::string& text, LrDecay* out);

struct BatchPlan {
  int64_t global_batch = 0;  // samples per optimizer step over all ranks
  int64_t local_batch = 0;   // samples per step on one rank
  int64_t base_batch = 0;    // the batch the base learning rate was tuned for
};

// global > 0: split it over the ranks (must divide evenly); else local > 0 per rank. base <= 0: the global batch.
// Throws hpclaunch::Error naming the flag when the numbers do not fit.
BatchPlan plan_batch(int64_t global_batch, int64_t local_batch, int64_t base_batch, int world_size);

// base_lr scaled by global/base: linear multiplies by the ratio, sqrt by its square root.
double scaled_lr(double base_lr, LrScaling scaling, int64_t global_batch, int64_t base_batch);

struct LrSchedule {
  double peak_lr = 1e-3;    // after scaling
  double min_lr = 0.0;      // where cosine decay ends
  int64_t warmup_steps = 0; // linear ramp from peak/warmup to peak
  int64_t total_steps = 1;  // cosine reaches min_lr here; later steps stay at min_lr
  LrDecay decay = LrDecay::cosine;

  // The learning rate for optimizer step `step` (0-based).
  double at(int64_t step) const;
};

}  // namespace hpctrain
