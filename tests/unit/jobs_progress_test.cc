// The one-line progress of `hpclaunch wait`.
#include <doctest/doctest.h>

#include "jobs/progress.h"

namespace jobs_progress_test {  // this file's names, apart from its unity batch's others (tests/CMakeLists.txt)

using namespace hpclaunch;

TEST_SUITE_BEGIN("jobs_progress");

TEST_CASE("queued: the state and its reason only") {
  Progress p;
  p.job_id = "1234";
  p.state.phase = Phase::pending;
  p.state.raw = "PENDING";
  p.state.reason = "Resources";
  CHECK(progress_line(p) == "1234 PENDING (Resources)");
  p.elapsed_s = 75;
  CHECK(progress_line(p) == "1234 PENDING (Resources) 1:15");
}

TEST_CASE("running: step, loss, learning rate, throughput, last validation") {
  Progress p;
  p.job_id = "1234";
  p.state.phase = Phase::running;
  p.state.raw = "RUNNING";
  metrics::Step step;
  step.step = 120;
  step.loss = 0.031234;
  step.lr = 0.001;
  step.samples_per_s = 410.4;
  p.latest.step = step;
  CHECK(progress_line(p) == "1234 RUNNING step 120 loss 0.03123 lr 1.00e-03 410 samples/s");
  metrics::Validation validation;
  validation.step = 100;
  validation.val_loss = 0.0298;
  p.latest.validation = validation;
  p.elapsed_s = 3725;
  CHECK(progress_line(p) == "1234 RUNNING 1:02:05 step 120 loss 0.03123 lr 1.00e-03 410 samples/s val 0.0298");
}

TEST_CASE("a user's log without a loss shows its step alone") {
  Progress p;
  p.job_id = "1234";
  p.state.phase = Phase::running;
  p.state.raw = "RUNNING";
  p.latest = latest_records("{\"step\":7,\"accuracy\":0.5}\n");
  CHECK(progress_line(p) == "1234 RUNNING step 7");
  p.latest = latest_records("{\"step\":8,\"loss\":0.25}\n");
  CHECK(progress_line(p) == "1234 RUNNING step 8 loss 0.25");
}

TEST_CASE("a run stopped by a non-finite loss says so and where; skipped steps are counted") {
  Progress p;
  p.job_id = "7";
  p.state.phase = Phase::running;
  p.state.raw = "RUNNING";
  metrics::Step step;
  step.step = 9;
  step.loss = metrics::k_nan;
  step.skipped = true;
  p.latest.step = step;
  CHECK(progress_line(p) == "7 RUNNING step 9 loss nan (step skipped)");
  metrics::RunEnd end;
  end.status = "nonfinite";
  end.step = 9;
  end.nonfinite_step = 9;
  end.skipped_steps = 3;
  p.latest.end = end;
  CHECK(progress_line(p) == "7 RUNNING step 9 loss nan stopped: non-finite loss at step 9 (3 skipped)");
}

TEST_CASE("a duration reads M:SS under an hour and H:MM:SS from one, rounded to the second; a negative one is 0:00") {
  CHECK(format_duration(0) == "0:00");
  CHECK(format_duration(59.6) == "1:00");
  CHECK(format_duration(3600) == "1:00:00");
  CHECK(format_duration(-3) == "0:00");
}

TEST_CASE("terminal lines redraw in place, cut to the width, and blank out a longer previous line") {
  CHECK(terminal_line("abc", 80, 0) == "\rabc");
  CHECK(terminal_line("abc", 80, 6) == "\rabc   ");
  CHECK(terminal_line("abcdefgh", 5, 0) == "\rabcd");
}

}  // namespace jobs_progress_test
