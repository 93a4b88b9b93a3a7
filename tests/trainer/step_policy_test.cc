// The loop's per-step decisions: the non-finite policy and when latest.pt is written.
#include <doctest/doctest.h>

#include "step_policy.h"

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

TEST_CASE("latest.pt after a step: on a stop or save request, and every N steps") {
  CHECK_FALSE(save_latest_after_step(false, false, 5, 0));
  CHECK(save_latest_after_step(true, false, 5, 0));
  CHECK(save_latest_after_step(false, true, 5, 0));
  CHECK(save_latest_after_step(false, false, 6, 3));
  CHECK_FALSE(save_latest_after_step(false, false, 7, 3));
}
