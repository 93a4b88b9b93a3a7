// Reading hpclaunch-train's metrics lines: strict for `plot` (errors name file:line), tolerant for `wait`.
#include <doctest/doctest.h>

#include "jobs/metrics.h"
#include "util/error.h"

using namespace hpclaunch;

namespace {

// Lines as trainer/trainer.cc (MetricsFile) writes them.
const char* k_file =
    "{\"type\":\"step\",\"epoch\":1,\"step\":1,\"loss\":2.5,\"lr\":0.001,\"samples_per_s\":400,\"step_time_s\":0.5,\"allreduce_s\":0.01}\n"
    "{\"type\":\"step\",\"epoch\":1,\"step\":2,\"loss\":1.5,\"lr\":0.002,\"samples_per_s\":420,\"step_time_s\":0.25,\"allreduce_s\":0.01}\n"
    "{\"type\":\"validation\",\"epoch\":1,\"step\":2,\"val_loss\":1.25,\"time_s\":1}\n"
    "{\"type\":\"step\",\"epoch\":2,\"step\":3,\"loss\":1,\"lr\":0.002,\"samples_per_s\":410,\"step_time_s\":0.25,\"allreduce_s\":0.01}\n";

}  // namespace

TEST_SUITE_BEGIN("jobs_metrics");

TEST_CASE("steps and validations are read; wall time sums step and validation times") {
  Metrics m = parse_metrics(k_file, "m.jsonl");
  REQUIRE(m.steps.size() == 3);
  REQUIRE(m.validations.size() == 1);
  CHECK(m.steps[1].step == 2);
  CHECK(m.steps[1].loss == doctest::Approx(1.5));
  CHECK(m.steps[1].lr == doctest::Approx(0.002));
  CHECK(m.steps[1].samples_per_s == doctest::Approx(420));
  CHECK(m.steps[0].wall_s == doctest::Approx(0.5));
  CHECK(m.steps[1].wall_s == doctest::Approx(0.75));
  CHECK(m.validations[0].wall_s == doctest::Approx(1.75));
  CHECK(m.steps[2].wall_s == doctest::Approx(2.0));
}

TEST_CASE("a record's own wall_s wins over the sum") {
  Metrics m = parse_metrics("{\"type\":\"step\",\"step\":1,\"loss\":1,\"step_time_s\":0.5,\"wall_s\":9}\n", "m");
  CHECK(m.steps[0].wall_s == doctest::Approx(9));
}

TEST_CASE("with \"time\" stamps wall time counts from the first record, across requeued runs and their wait") {
  const std::string stamped =
      "{\"type\":\"step\",\"step\":1,\"loss\":2,\"step_time_s\":0.5,\"time\":1700000000.25}\n"
      "{\"type\":\"step\",\"step\":2,\"loss\":1.5,\"step_time_s\":0.5,\"time\":1700000000.75}\n"
      "{\"type\":\"validation\",\"step\":2,\"val_loss\":1.25,\"time_s\":1,\"time\":1700000001.75}\n"
      // requeued: 2 minutes in the queue, then step 2 again
      "{\"type\":\"step\",\"step\":2,\"loss\":1.4,\"step_time_s\":0.5,\"time\":1700000121.75}\n"
      "{\"type\":\"step\",\"step\":3,\"loss\":1.0,\"step_time_s\":0.5,\"time\":1700000122.25}\n";
  Metrics m = parse_metrics(stamped, "m");
  REQUIRE(m.steps.size() == 3);
  CHECK(m.steps[0].wall_s == doctest::Approx(0.0));
  CHECK(m.steps[1].wall_s == doctest::Approx(121.5));
  CHECK(m.steps[2].wall_s == doctest::Approx(122.0));
  CHECK(m.validations.empty());
}

TEST_CASE("bad metrics files: one error naming file:line") {
  CHECK_THROWS_WITH(parse_metrics("", "m.jsonl"), doctest::Contains("m.jsonl: is empty"));
  CHECK_THROWS_WITH(parse_metrics("\n\n", "m.jsonl"), doctest::Contains("m.jsonl: is empty"));
  std::string truncated = std::string(k_file) + "{\"type\":\"step\",\"ep";
  CHECK_THROWS_WITH(parse_metrics(truncated, "m.jsonl"), doctest::Contains("m.jsonl:5: the last line is cut short"));
  CHECK_THROWS_WITH(parse_metrics("{\"type\":\"step\",\"step\":1,\"loss\":1}\nnot json at all\n", "m.jsonl"),
                    doctest::Contains("m.jsonl:2: not a JSON object: 'not json at all'"));
  CHECK_THROWS_WITH(parse_metrics("[1,2]\n", "m.jsonl"), doctest::Contains("m.jsonl:1: not a JSON object"));
  CHECK_THROWS_WITH(parse_metrics("{\"type\":\"validation\",\"step\":1,\"val_loss\":1}\n", "m.jsonl"),
                    doctest::Contains("m.jsonl: holds no step records"));
  CHECK_THROWS_WITH(parse_metrics("{\"type\":\"step\",\"step\":1}\n", "m.jsonl"),
                    doctest::Contains("m.jsonl:1: step record without a numeric \"loss\""));
  CHECK_THROWS_WITH(read_metrics("/nonexistent/m.jsonl"), doctest::Contains("/nonexistent/m.jsonl: cannot read"));
}

TEST_CASE("latest_metrics skips a line still being written") {
  std::string growing = std::string(k_file) + "{\"type\":\"step\",\"step\":4,\"lo";
  LatestMetrics l = latest_metrics(growing);
  REQUIRE(l.step);
  CHECK(l.step->step == 3);
  REQUIRE(l.validation);
  CHECK(l.validation->val_loss == doctest::Approx(1.25));
  CHECK_FALSE(latest_metrics("").step.has_value());
  CHECK_FALSE(latest_metrics("{\"type\":\"step\",\"step\":1,\"loss\":1}").step.has_value());  // no newline yet
  // A tail cut mid-line at its start: the first fragment is not JSON and is skipped.
  CHECK(latest_metrics("ss\":1}\n{\"type\":\"step\",\"step\":8,\"loss\":0.5}\n").step->step == 8);
}

TEST_CASE("a resumed run's records replace the steps it repeats; wall time goes on") {
  std::string resumed = std::string(k_file) +
      "{\"type\":\"step\",\"epoch\":1,\"step\":2,\"loss\":1.4,\"step_time_s\":0.25}\n"
      "{\"type\":\"step\",\"epoch\":2,\"step\":3,\"loss\":0.9,\"step_time_s\":0.25}\n";
  Metrics m = parse_metrics(resumed, "m");
  REQUIRE(m.steps.size() == 3);
  CHECK(m.steps[0].step == 1);
  CHECK(m.steps[1].step == 2);
  CHECK(m.steps[1].loss == doctest::Approx(1.4));
  CHECK(m.steps[2].loss == doctest::Approx(0.9));
  CHECK(m.validations.empty());  // the validation after step 2 was repeated too
  CHECK(m.steps[2].wall_s == doctest::Approx(2.5));
}
