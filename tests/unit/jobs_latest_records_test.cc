// The latest records of a metrics file still being written, for `wait`'s progress line (jobs/latest_records.h).
#include <doctest/doctest.h>

#include <cmath>

#include "jobs/latest_records.h"

namespace jobs_latest_records_test {  // this file's names, apart from its unity batch's others (tests/CMakeLists.txt)

using namespace hpclaunch;

namespace {

// Whole lines as the trainer writes them: its last step is 3, the last validation after step 2.
const char* k_written =
    "{\"type\":\"step\",\"epoch\":1,\"step\":2,\"loss\":1.5,\"lr\":0.002}\n"
    "{\"type\":\"validation\",\"epoch\":1,\"step\":2,\"val_loss\":1.25,\"time_s\":1}\n"
    "{\"type\":\"step\",\"epoch\":2,\"step\":3,\"loss\":1,\"lr\":0.002}\n";

}  // namespace

TEST_SUITE_BEGIN("jobs_latest_records");

TEST_CASE("the latest step and validation are read from a tail whose last line is still being written") {
  std::string growing = std::string(k_written) + "{\"type\":\"step\",\"step\":4,\"lo";
  LatestRecords l = latest_records(growing);
  CHECK_FALSE(l.end.has_value());
  REQUIRE(l.step);
  CHECK(l.step->step == 3);
  REQUIRE(l.validation);
  CHECK(l.validation->val_loss == doctest::Approx(1.25));
  CHECK_FALSE(latest_records("").step.has_value());
  CHECK_FALSE(latest_records("{\"type\":\"step\",\"step\":1,\"loss\":1}").step.has_value());  // no newline yet
  // A tail cut mid-line at its start: the first fragment is not JSON and is skipped.
  CHECK(latest_records("ss\":1}\n{\"type\":\"step\",\"step\":8,\"loss\":0.5}\n").step->step == 8);
  // The end of a run, when it is the last record; a null loss reads as NaN.
  LatestRecords ended = latest_records(
      "{\"type\":\"step\",\"step\":8,\"loss\":null}\n{\"type\":\"run_end\",\"step\":8,\"status\":\"nonfinite\"}\n");
  REQUIRE(ended.end);
  CHECK(ended.end->status == "nonfinite");
  CHECK(std::isnan(ended.step->loss));
  CHECK_FALSE(latest_records("{\"type\":\"run_end\",\"step\":8,\"status\":\"stopped\"}\n"
                             "{\"type\":\"step\",\"step\":8,\"loss\":1}\n").end.has_value());
}

TEST_CASE("a user's own log counts: lines with a numeric step and no type are steps, named as plot names them") {
  LatestRecords l =
      latest_records("{\"step\":1,\"loss\":0.9}\n{\"step\":2,\"train_loss\":0.5,\"learning_rate\":0.01}\n");
  REQUIRE(l.step);
  CHECK(l.step->step == 2);
  CHECK(l.step->loss == doctest::Approx(0.5));
  CHECK(l.step->lr == doctest::Approx(0.01));
  CHECK(l.has_loss);
  // No loss at all: the step counts, and the line says none.
  LatestRecords no_loss = latest_records("{\"step\":7,\"accuracy\":0.5}\n");
  REQUIRE(no_loss.step);
  CHECK(no_loss.step->step == 7);
  CHECK_FALSE(no_loss.has_loss);
  // The trainer's records win over a user line before them, as the latest.
  CHECK(latest_records("{\"step\":9,\"loss\":1}\n{\"type\":\"step\",\"step\":3,\"loss\":2}\n").step->step == 3);
}

TEST_SUITE_END();

}  // namespace jobs_latest_records_test
