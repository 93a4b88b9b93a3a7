// What the training loop decides after every step, apart from the tensors: whether a non-finite step is taken,
// skipped or ends the run (--on-nonfinite, --max-skipped-steps), and when latest.pt is written. Pure logic.
#pragma once
#include <cstdint>
#include <limits>
#include <optional>

namespace hpctrain {

enum class StepAction { take, skip, stop };

// Counts non-finite steps under the policy: `stop` stops at the first; `skip-step` skips the optimizer step and
// stops after `max_in_a_row` skipped steps in a row. Every rank feeds it the same (allreduced) flags.
class NonfiniteTracker {
 public:
  NonfiniteTracker(bool skip_steps, int64_t max_in_a_row) : m_skip(skip_steps), m_max(max_in_a_row) {}
  // Step `step` (counted from 1) had a loss of `loss` (the mean over ranks), finite or not on any rank.
  StepAction record(int64_t step, bool nonfinite, double loss);

  bool skips_steps() const { return m_skip; }
  int64_t max_in_a_row() const { return m_max; }
  int64_t skipped() const { return m_skipped; }
  int64_t in_a_row() const { return m_in_a_row; }
  std::optional<int64_t> last_finite_step() const { return m_last_finite_step; }
  double last_finite_loss() const { return m_last_finite_loss; }

 private:
  bool m_skip;
  int64_t m_max;
  int64_t m_skipped = 0;
  int64_t m_in_a_row = 0;
  std::optional<int64_t> m_last_finite_step;
  double m_last_finite_loss = std::numeric_limits<double>::quiet_NaN();
};

// What the loop does after a step's action is known: the optimizer step (unless the graph took it already), and
// the gathering of the ranks whose own loss was not finite (an allreduce and host syncs): only for a step that is
// not taken, where the ranks are reported.
struct AfterStep {
  bool optimizer_step = false;
  bool gather_nonfinite_ranks = false;
};
AfterStep after_step(StepAction action, bool optimizer_stepped);

// latest.pt after a step: on a stop or save request (signals), and every `every` steps (0: never periodically).
bool save_latest_after_step(bool stop_requested, bool save_requested, int64_t global_step, int64_t every);

}  // namespace hpctrain
