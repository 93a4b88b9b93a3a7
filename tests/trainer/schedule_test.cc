// Batch split and learning-rate rules (seed 001): split, scaling, warm-up, cosine.
#include <doctest/doctest.h>

#include <cmath>

#include "schedule.h"
#include "util/error.h"

using namespace hpctrain;

TEST_SUITE_BEGIN("Schedule");

TEST_CASE("the global batch is split evenly over the ranks; a per-rank batch multiplies") {
  BatchPlan p = plan_batch(256, 0, 64, 4);
  CHECK(p.global_batch == 256);
  CHECK(p.local_batch == 64);
  CHECK(p.base_batch == 64);
  p = plan_batch(0, 32, 0, 3);
  CHECK(p.global_batch == 96);
  CHECK(p.local_batch == 32);
  CHECK(p.base_batch == 96);  // no base: no scaling
  for (int world = 1; world <= 16; ++world)
    for (int64_t g = 1; g <= 64; ++g) {
      if (g % world == 0) CHECK(plan_batch(g, 0, 0, world).local_batch * world == g);
      else CHECK_THROWS_AS(plan_batch(g, 0, 0, world), hpclaunch::Error);
    }
}

TEST_CASE("an uneven split names the flag and the fix") {
  try {
    plan_batch(10, 0, 0, 4);
    FAIL("no error");
  } catch (const hpclaunch::Error& e) {
    CHECK(std::string(e.what()) ==
          "--global-batch-size: 10 does not split evenly over 4 ranks; use a multiple of WORLD_SIZE=4");
  }
  CHECK_THROWS_AS(plan_batch(0, 0, 0, 1), hpclaunch::Error);
}

TEST_CASE("learning-rate scaling: none, linear and sqrt of global/base") {
  CHECK(scaled_lr(1e-3, LrScaling::none, 512, 64) == doctest::Approx(1e-3));
  CHECK(scaled_lr(1e-3, LrScaling::linear, 512, 64) == doctest::Approx(8e-3));
  CHECK(scaled_lr(1e-3, LrScaling::sqrt, 512, 64) == doctest::Approx(1e-3 * std::sqrt(8.0)));
  LrScaling s{};
  CHECK(parse_lr_scaling("sqrt", &s));
  CHECK(s == LrScaling::sqrt);
  CHECK_FALSE(parse_lr_scaling("log", &s));
}

TEST_CASE("warm-up rises linearly to the peak, then cosine falls to the minimum and stays") {
  LrSchedule sch;
  sch.peak_lr = 1.0;
  sch.min_lr = 0.1;
  sch.warmup_steps = 4;
  sch.total_steps = 104;
  CHECK(sch.at(0) == doctest::Approx(0.25));
  CHECK(sch.at(3) == doctest::Approx(1.0));
  CHECK(sch.at(4) == doctest::Approx(1.0));
  CHECK(sch.at(54) == doctest::Approx(0.55));  // half way: the mean of peak and min
  CHECK(sch.at(104) == doctest::Approx(0.1));
  CHECK(sch.at(1000) == doctest::Approx(0.1));
  for (int64_t s = 4; s < 104; ++s) CHECK(sch.at(s + 1) <= sch.at(s));  // monotone after warm-up
  sch.decay = LrDecay::constant;
  CHECK(sch.at(90) == doctest::Approx(1.0));
}

TEST_CASE("no warm-up starts at the peak; a total shorter than warm-up does not divide by zero") {
  LrSchedule sch;
  sch.peak_lr = 2.0;
  sch.total_steps = 10;
  CHECK(sch.at(0) == doctest::Approx(2.0));
  sch.warmup_steps = 10;
  CHECK(std::isfinite(sch.at(10)));
  CHECK(sch.at(10) == doctest::Approx(2.0));
}

TEST_SUITE_END();
