// The one-line progress of `hpclaunch wait`.
#include <doctest/doctest.h>

#include "jobs/progress.h"

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
  p.metrics.step = StepRecord{120, 0.031234, 0.001, 410.4, 0};
  CHECK(progress_line(p) == "1234 RUNNING step 120 loss 0.03123 lr 1.00e-03 410 samples/s");
  p.metrics.validation = ValidationRecord{100, 0.0298, 0};
  p.elapsed_s = 3725;
  CHECK(progress_line(p) == "1234 RUNNING 1:02:05 step 120 loss 0.03123 lr 1.00e-03 410 samples/s val 0.0298");
}

TEST_CASE("durations") {
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
