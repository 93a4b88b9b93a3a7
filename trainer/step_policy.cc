// The loop's per-step decisions: see step_policy.h.
#include "step_policy.h"

namespace hpctrain {

StepAction NonfiniteTracker::record(int64_t step, bool nonfinite, double loss) {
  if (!nonfinite) {
    m_in_a_row = 0;
    m_last_finite_step = step;
    m_last_finite_loss = loss;
    return StepAction::take;
  }
  if (!m_skip) return StepAction::stop;
  ++m_skipped;
  ++m_in_a_row;
  return m_in_a_row >= m_max ? StepAction::stop : StepAction::skip;
}

AfterStep after_step(StepAction action, bool optimizer_stepped) {
  AfterStep after;
  after.optimizer_step = action == StepAction::take && !optimizer_stepped;
  after.gather_nonfinite_ranks = action != StepAction::take;
  return after;
}

bool save_latest_after_step(bool stop_requested, bool save_requested, int64_t global_step, int64_t every) {
  return stop_requested || save_requested || (every > 0 && global_step % every == 0);
}

}  // namespace hpctrain
