// The loop's per-step decisions: the non-finite policy and when latest.pt is written.
#include <doctest/doctest.h>

#include "step_policy.h"

#include <vector>

using namespace hpctrain;

TEST_SUITE_BEGIN("StepPolicy");

TEST_CASE("stop: the first non-finite step ends the run; the last finite step and loss are kept") {
  NonfiniteTracker t(false, 10);
  CHECK(t.record(1, false, 0.5) == StepAction::take);
  CHECK(t.record(2, false, 0.25) == StepAction::take);
  CHECK(t.record(3, true, 0.0) == StepAction::stop);
  CHECK(t.last_finite_step() == 2);
  CHECK(t.last_finite_loss() == 0.25);
  CHECK(t.skipped() == 0);
}

TEST_CASE("skip-step: skipped steps are counted; a finite step resets the run; too many in a row stop") {
  NonfiniteTracker t(true, 3);
  CHECK_FALSE(t.last_finite_step().has_value());
  CHECK(t.record(1, true, 0.0) == StepAction::skip);
  CHECK(t.record(2, true, 0.0) == StepAction::skip);
  CHECK(t.record(3, false, 1.0) == StepAction::take);
  CHECK(t.in_a_row() == 0);
  CHECK(t.record(4, true, 0.0) == StepAction::skip);
  CHECK(t.record(5, true, 0.0) == StepAction::skip);
  CHECK(t.record(6, true, 0.0) == StepAction::stop);
  CHECK(t.skipped() == 5);
  CHECK(t.in_a_row() == 3);
  CHECK(t.last_finite_step() == 3);
}

TEST_CASE("skip-step with a limit of one stops at the first, counted as skipped") {
  NonfiniteTracker t(true, 1);
  CHECK(t.record(1, true, 0.0) == StepAction::stop);
  CHECK(t.skipped() == 1);
}

// The loop's rule, step by step: the ranks are gathered (an allreduce and three host syncs) only for a step that
// is not taken; a finite step under --cuda-graphs (the graph took the optimizer step) gathers nothing.
int64_t gathers_in_run(bool skip_steps, bool graph, const std::vector<bool>& nonfinite, int64_t* optimizer_steps) {
  NonfiniteTracker t(skip_steps, 3);
  int64_t gathers = 0;
  *optimizer_steps = 0;
  for (size_t i = 0; i < nonfinite.size(); ++i) {
    const AfterStep after = after_step(t.record(static_cast<int64_t>(i + 1), nonfinite[i], 1.0), graph);
    gathers += after.gather_nonfinite_ranks ? 1 : 0;
    *optimizer_steps += after.optimizer_step ? 1 : 0;
  }
  return gathers;
}

TEST_CASE("after a step: finite steps gather no ranks, eager or under a graph; a skipped or stopping step does") {
  int64_t optimizer_steps = 0;
  const std::vector<bool> finite(10, false);
  CHECK(gathers_in_run(false, /*graph=*/true, finite, &optimizer_steps) == 0);
  CHECK(optimizer_steps == 0);  // the graph stepped every time
  CHECK(gathers_in_run(false, /*graph=*/false, finite, &optimizer_steps) == 0);
  CHECK(optimizer_steps == 10);
  const std::vector<bool> one_bad{false, false, true, false, false};
  CHECK(gathers_in_run(true, /*graph=*/false, one_bad, &optimizer_steps) == 1);
  CHECK(optimizer_steps == 4);
  CHECK(gathers_in_run(true, /*graph=*/true, one_bad, &optimizer_steps) == 1);
  CHECK(optimizer_steps == 0);
  CHECK(gathers_in_run(false, /*graph=*/false, {false, true}, &optimizer_steps) == 1);  // stop reports its ranks
  CHECK(after_step(StepAction::stop, false).gather_nonfinite_ranks);
  CHECK_FALSE(after_step(StepAction::stop, false).optimizer_step);
}

TEST_CASE("latest.pt after a step: on a stop or save request, and every N steps") {
  CHECK_FALSE(save_latest_after_step(false, false, 5, 0));
  CHECK(save_latest_after_step(true, false, 5, 0));
  CHECK(save_latest_after_step(false, true, 5, 0));
  CHECK(save_latest_after_step(false, false, 6, 3));
  CHECK_FALSE(save_latest_after_step(false, false, 7, 3));
}
