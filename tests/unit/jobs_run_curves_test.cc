// A run's curves (jobs/run_curves.h): hpclaunch-train's metrics lines read strictly for `plot` (errors name
// file:line); non-finite values as gaps with marks; a user's own JSON-lines log.
#include <doctest/doctest.h>

#include <cmath>

#include "jobs/run_curves.h"
#include "util/error.h"

namespace jobs_run_curves_test {  // this file's names, apart from its unity batch's others (tests/CMakeLists.txt)

using namespace hpclaunch;

namespace {

const std::vector<Point>& points(const RunCurves& m, const char* field) {
  const Curve* c = m.curve(field);
  REQUIRE_MESSAGE(c != nullptr, "no curve ", field);
  return c->points;
}

// Lines as the trainer writes them (trainer/metrics_writer.h).
const char* k_file =
    "{\"type\":\"step\",\"epoch\":1,\"step\":1,\"loss\":2.5,\"lr\":0.001,\"samples_per_s\":400,\"step_time_s\":0.5,\"allreduce_s\":0.01}\n"
    "{\"type\":\"step\",\"epoch\":1,\"step\":2,\"loss\":1.5,\"lr\":0.002,\"samples_per_s\":420,\"step_time_s\":0.25,\"allreduce_s\":0.01}\n"
    "{\"type\":\"validation\",\"epoch\":1,\"step\":2,\"val_loss\":1.25,\"time_s\":1}\n"
    "{\"type\":\"step\",\"epoch\":2,\"step\":3,\"loss\":1,\"lr\":0.002,\"samples_per_s\":410,\"step_time_s\":0.25,\"allreduce_s\":0.01}\n";

}  // namespace

TEST_SUITE_BEGIN("jobs_run_curves");

TEST_CASE("steps and validations are read; wall time sums step and validation times") {
  RunCurves m = parse_run_curves(k_file, "m.jsonl");
  CHECK_FALSE(m.user_log);
  REQUIRE(points(m, "loss").size() == 3);
  REQUIRE(points(m, "val_loss").size() == 1);
  CHECK(points(m, "loss")[1].step == 2);
  CHECK(points(m, "loss")[1].value == doctest::Approx(1.5));
  CHECK(points(m, "lr")[1].value == doctest::Approx(0.002));
  CHECK(points(m, "samples_per_s")[1].value == doctest::Approx(420));
  CHECK(points(m, "loss")[0].wall_s == doctest::Approx(0.5));
  CHECK(points(m, "loss")[1].wall_s == doctest::Approx(0.75));
  CHECK(points(m, "val_loss")[0].wall_s == doctest::Approx(1.75));
  CHECK(points(m, "loss")[2].wall_s == doctest::Approx(2.0));
  CHECK(m.marks.empty());
}

TEST_CASE("a record's own wall_s wins over the sum") {
  RunCurves m = parse_run_curves("{\"type\":\"step\",\"step\":1,\"loss\":1,\"step_time_s\":0.5,\"wall_s\":9}\n", "m");
  CHECK(points(m, "loss")[0].wall_s == doctest::Approx(9));
}

TEST_CASE("with \"time\" stamps wall time counts from the first record, across requeued runs and their wait") {
  const std::string stamped =
      "{\"type\":\"step\",\"step\":1,\"loss\":2,\"step_time_s\":0.5,\"time\":1700000000.25}\n"
      "{\"type\":\"step\",\"step\":2,\"loss\":1.5,\"step_time_s\":0.5,\"time\":1700000000.75}\n"
      "{\"type\":\"validation\",\"step\":2,\"val_loss\":1.25,\"time_s\":1,\"time\":1700000001.75}\n"
      // requeued: 2 minutes in the queue, then step 2 again
      "{\"type\":\"step\",\"step\":2,\"loss\":1.4,\"step_time_s\":0.5,\"time\":1700000121.75}\n"
      "{\"type\":\"step\",\"step\":3,\"loss\":1.0,\"step_time_s\":0.5,\"time\":1700000122.25}\n";
  RunCurves m = parse_run_curves(stamped, "m");
  REQUIRE(points(m, "loss").size() == 3);
  CHECK(points(m, "loss")[0].wall_s == doctest::Approx(0.0));
  CHECK(points(m, "loss")[1].wall_s == doctest::Approx(121.5));
  CHECK(points(m, "loss")[2].wall_s == doctest::Approx(122.0));
  CHECK(points(m, "val_loss").empty());
}

TEST_CASE("bad metrics files: one error naming file:line") {
  CHECK_THROWS_WITH(parse_run_curves("", "m.jsonl"), doctest::Contains("m.jsonl: is empty"));
  CHECK_THROWS_WITH(parse_run_curves("\n\n", "m.jsonl"), doctest::Contains("m.jsonl: is empty"));
  std::string truncated = std::string(k_file) + "{\"type\":\"step\",\"ep";
  CHECK_THROWS_WITH(parse_run_curves(truncated, "m.jsonl"), doctest::Contains("m.jsonl:5: the last line is cut short"));
  CHECK_THROWS_WITH(parse_run_curves("{\"type\":\"step\",\"step\":1,\"loss\":1}\nnot json at all\n", "m.jsonl"),
                    doctest::Contains("m.jsonl:2: not a JSON object: 'not json at all'"));
  CHECK_THROWS_WITH(parse_run_curves("[1,2]\n", "m.jsonl"), doctest::Contains("m.jsonl:1: not a JSON object"));
  CHECK_THROWS_WITH(parse_run_curves("{\"type\":\"validation\",\"step\":1,\"val_loss\":1}\n", "m.jsonl"),
                    doctest::Contains("m.jsonl: holds no step records"));
  CHECK_THROWS_WITH(parse_run_curves("{\"type\":\"step\",\"step\":1}\n", "m.jsonl"),
                    doctest::Contains("m.jsonl:1: step record without a numeric \"loss\""));
  CHECK_THROWS_WITH(read_run_curves("/nonexistent/m.jsonl"), doctest::Contains("/nonexistent/m.jsonl: cannot read"));
}

TEST_CASE("a resumed run's records replace the steps it repeats; wall time goes on") {
  std::string resumed = std::string(k_file) +
      "{\"type\":\"step\",\"epoch\":1,\"step\":2,\"loss\":1.4,\"step_time_s\":0.25}\n"
      "{\"type\":\"step\",\"epoch\":2,\"step\":3,\"loss\":0.9,\"step_time_s\":0.25}\n";
  RunCurves m = parse_run_curves(resumed, "m");
  const auto& loss = points(m, "loss");
  REQUIRE(loss.size() == 3);
  CHECK(loss[0].step == 1);
  CHECK(loss[1].step == 2);
  CHECK(loss[1].value == doctest::Approx(1.4));
  CHECK(loss[2].value == doctest::Approx(0.9));
  CHECK(points(m, "val_loss").empty());  // the validation after step 2 was repeated too
  CHECK(loss[2].wall_s == doctest::Approx(2.5));
}

TEST_CASE("each run_start begins a run, ended by its run_end; a run without one was killed or goes on") {
  const std::string requeued =
      "{\"type\":\"run_start\",\"step\":0,\"world_size\":4,\"time\":1000}\n"
      "{\"type\":\"step\",\"step\":1,\"loss\":2,\"time\":1001}\n"
      "{\"type\":\"step\",\"step\":2,\"loss\":1.8,\"time\":1002}\n"
      "{\"type\":\"run_end\",\"step\":2,\"status\":\"stopped\",\"exit_code\":99,\"time\":1003}\n"
      "{\"type\":\"run_start\",\"step\":2,\"world_size\":4,\"time\":1030}\n"
      "{\"type\":\"step\",\"step\":3,\"loss\":1.5,\"time\":1031}\n"
      "{\"type\":\"run_start\",\"step\":2,\"world_size\":2,\"time\":1040}\n"
      "{\"type\":\"step\",\"step\":3,\"loss\":1.4,\"time\":1041}\n"
      "{\"type\":\"step\",\"step\":4,\"loss\":1.2,\"time\":1042}\n";
  RunCurves m = parse_run_curves(requeued, "r.jsonl");
  REQUIRE(m.runs.size() == 3);
  CHECK(m.runs[0].status == "stopped");
  CHECK(m.runs[0].exit_code == 99);
  CHECK(m.runs[0].end_step == 2);
  CHECK(m.runs[0].end_wall_s == doctest::Approx(3));
  CHECK(m.runs[1].start_step == 2);
  CHECK(m.runs[1].start_wall_s == doctest::Approx(30));
  CHECK(m.runs[1].status.empty());  // killed: the next run_start came without a run_end
  CHECK(m.runs[1].end_step == 3);
  CHECK(m.runs[1].end_wall_s == doctest::Approx(31));
  CHECK(m.runs[2].world_size == 2);
  CHECK(m.runs[2].end_step == 4);
  CHECK(m.runs[2].end_wall_s == doctest::Approx(42));
  CHECK(parse_run_curves(k_file, "m").runs.empty());  // no run_start: no runs to tell
}

TEST_CASE("a non-finite loss (null) is a gap with a mark; a nonfinite run_end marks its step") {
  const std::string diverged =
      "{\"type\":\"run_start\",\"step\":0,\"model\":\"autoencoder\",\"world_size\":2}\n"
      "{\"type\":\"step\",\"step\":1,\"loss\":2,\"step_time_s\":0.5}\n"
      "{\"type\":\"step\",\"step\":2,\"loss\":null,\"skipped\":true,\"step_time_s\":0.5}\n"
      "{\"type\":\"step\",\"step\":3,\"loss\":1.5,\"step_time_s\":0.5}\n"
      "{\"type\":\"step\",\"step\":4,\"loss\":null,\"step_time_s\":0.5}\n"
      "{\"type\":\"run_end\",\"step\":4,\"status\":\"nonfinite\",\"exit_code\":3,\"nonfinite_step\":4,"
      "\"nonfinite_ranks\":[1],\"last_finite_step\":3,\"last_finite_loss\":1.5}\n";
  RunCurves m = parse_run_curves(diverged, "d.jsonl");
  const auto& loss = points(m, "loss");
  REQUIRE(loss.size() == 4);
  CHECK(std::isnan(loss[1].value));
  CHECK(loss[2].value == doctest::Approx(1.5));
  CHECK(std::isnan(loss[3].value));
  REQUIRE(m.marks.size() == 2);  // the run_end's step is marked once
  CHECK(m.marks[0].step == 2);
  CHECK(m.marks[0].what == "step skipped: non-finite loss");
  CHECK(m.marks[1].step == 4);
  CHECK(m.marks[1].what == "non-finite loss");
}

TEST_CASE("a user's own JSON lines: every numeric field but counters, known names mapped to the four curves") {
  const std::string user =
      "{\"step\": 10, \"epoch\": 0, \"train_loss\": 0.9, \"learning_rate\": 0.1, \"acc\": 0.5, \"tag\": \"x\"}\n"
      "{\"step\": 10, \"eval_loss\": 0.95}\n"
      "{\"step\": 20, \"epoch\": 1, \"train_loss\": NaN, \"acc\": 0.7, \"time\": 1700000000}\n";  // Python's nan
  RunCurves m = parse_run_curves(user, "u.jsonl");
  CHECK(m.user_log);
  std::vector<std::string> fields;
  for (const auto& c : m.curves) fields.push_back(c.field);
  CHECK(fields == std::vector<std::string>{"loss", "lr", "acc", "val_loss"});
  CHECK(m.not_drawn == std::vector<std::string>{"epoch", "time"});
  CHECK(points(m, "acc").size() == 2);
  CHECK(points(m, "val_loss")[0].step == 10);
  CHECK(std::isnan(points(m, "loss")[1].value));
  REQUIRE(m.marks.size() == 1);
  CHECK(m.marks[0].step == 20);
  CHECK(canonical_field("valid_loss") == "val_loss");
  CHECK(canonical_field("accuracy") == "accuracy");
}

TEST_CASE("a user log that starts again from a lower step replaces what it repeats") {
  RunCurves m = parse_run_curves("{\"step\":1,\"loss\":3}\n{\"step\":2,\"loss\":2}\n{\"step\":2,\"loss\":1.5}\n"
                            "{\"step\":1,\"loss\":2.5}\n{\"step\":2,\"loss\":1}\n", "u");
  const auto& loss = points(m, "loss");
  REQUIRE(loss.size() == 2);
  CHECK(loss[0].value == doctest::Approx(2.5));
  CHECK(loss[1].value == doctest::Approx(1));
  CHECK_THROWS_WITH(parse_run_curves("{\"step\":1,\"name\":\"a\"}\n", "u"), doctest::Contains("u: holds no step records"));
}

}  // namespace jobs_run_curves_test
