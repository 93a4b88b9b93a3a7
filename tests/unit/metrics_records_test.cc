// The metrics file's records (metrics/records.h): written as one JSON line each, "type" first, non-finite
// numbers as null; read back the same; a user's own lines; what a reader of a growing file is spared.
#include <doctest/doctest.h>

#include <cmath>

#include "metrics/records.h"
#include "util/error.h"

namespace metrics_records_test {  // this file's names, apart from its unity batch's others (tests/CMakeLists.txt)

using namespace hpclaunch;
using namespace hpclaunch::metrics;

TEST_SUITE_BEGIN("metrics_records");

TEST_CASE("a step record is one JSON line, type first; it reads back field by field") {
  Step s;
  s.epoch = 2;
  s.step = 41;
  s.loss = 0.125;
  s.lr = 0.001;
  s.samples_per_s = 1500;
  s.step_time_s = 0.25;
  s.allreduce_s = 0.5;
  s.data_wait_s = 0.0625;
  s.cpu_s = 0.75;
  s.time = 1700000000.5;
  const std::string line = to_line(s);
  CHECK(line ==
        "{\"type\":\"step\",\"epoch\":2,\"step\":41,\"loss\":0.125,\"lr\":0.001,\"samples_per_s\":1500.0,"
        "\"step_time_s\":0.25,\"allreduce_s\":0.5,\"data_wait_s\":0.0625,\"cpu_s\":0.75,\"time\":1700000000.5}\n");
  auto back = parse_line(line.substr(0, line.size() - 1), "m:1");
  REQUIRE(back);
  const Step& r = std::get<Step>(*back);
  CHECK(r.epoch == 2);
  CHECK(r.step == 41);
  CHECK(r.loss == 0.125);
  CHECK(r.data_wait_s == 0.0625);
  CHECK(r.cpu_s == 0.75);
  CHECK(*r.time == 1700000000.5);
  CHECK_FALSE(r.wall_s.has_value());
  CHECK_FALSE(r.skipped);
  CHECK(step_of(*back) == 41);
}

TEST_CASE("a step past int64's range is no step: the strict reader says so, a lax one keeps it as another record") {
  // static_cast<int64_t>(1e27) was undefined behaviour (UBSan, found by fuzz/metrics.cc).
  const std::string line = R"({"type":"step","epoch":1,"step":1e27,"loss":0.5})";
  CHECK_THROWS_WITH(parse_line(line, "m.jsonl:1"), doctest::Contains("step record without a numeric \"step\""));
  auto lax = parse_line(line);
  REQUIRE(lax);
  CHECK(std::holds_alternative<OtherRecord>(*lax));
  CHECK_FALSE(step_of(*lax));
}

TEST_CASE("a non-finite loss is written as null (valid JSON) and read back as NaN; a skipped step says so") {
  Step s;
  s.step = 7;
  s.loss = -std::numeric_limits<double>::infinity();
  s.skipped = true;
  const std::string line = to_line(s);
  CHECK(line.find("\"loss\":null") != std::string::npos);
  CHECK(line.find("\"skipped\":true") != std::string::npos);
  CHECK(line.find("inf") == std::string::npos);
  const Step r = std::get<Step>(*parse_line(line));
  CHECK(std::isnan(r.loss));
  CHECK(r.skipped);
  Validation v;
  v.val_loss = k_nan;
  CHECK(to_line(v).find("\"val_loss\":null") != std::string::npos);
  CHECK(std::isnan(std::get<Validation>(*parse_line(to_line(v))).val_loss));
}

TEST_CASE("run start and run end round-trip; the end of a diverged run names step, ranks and last finite loss") {
  RunStart b;
  b.step = 20;
  b.model = "resnet";
  b.world_size = 4;
  b.global_batch = 256;
  b.on_nonfinite = "skip-step";
  const RunStart rb = std::get<RunStart>(*parse_line(to_line(b)));
  CHECK(rb.step == 20);
  CHECK(rb.model == "resnet");
  CHECK(rb.world_size == 4);
  CHECK(rb.global_batch == 256);
  CHECK(rb.on_nonfinite == "skip-step");
  RunEnd e;
  e.step = 33;
  e.status = "nonfinite";
  e.exit_code = 3;
  e.skipped_steps = 2;
  e.nonfinite_step = 33;
  e.nonfinite_ranks = {1, 3};
  e.last_finite_step = 32;
  e.last_finite_loss = 0.5;
  const std::string line = to_line(e);
  CHECK(line.rfind("{\"type\":\"run_end\",\"step\":33,\"status\":\"nonfinite\",\"exit_code\":3,\"skipped_steps\":2,"
                   "\"nonfinite_step\":33,\"nonfinite_ranks\":[1,3],\"last_finite_step\":32,\"last_finite_loss\":0.5",
                   0) == 0);
  const RunEnd re = std::get<RunEnd>(*parse_line(line));
  CHECK(re.nonfinite_ranks == std::vector<int>{1, 3});
  CHECK(*re.last_finite_step == 32);
  CHECK(re.last_finite_loss == 0.5);
  RunEnd done;
  done.step = 100;
  done.status = "done";
  CHECK(to_line(done).find("nonfinite") == std::string::npos);
}

TEST_CASE("lines without \"type\" but with a numeric step are a user's records: their numbers in order") {
  auto r = parse_line(R"({"step": 5, "loss": 0.5, "name": "x", "acc": null, "lr": 1e-3})");
  REQUIRE(r);
  const UserRecord& u = std::get<UserRecord>(*r);
  CHECK(u.step == 5);
  REQUIRE(u.values.size() == 3);
  CHECK(u.values[0].first == "loss");
  CHECK(u.values[1].first == "acc");
  CHECK(std::isnan(u.values[1].second));
  CHECK(u.values[2].second == doctest::Approx(1e-3));
  CHECK(std::holds_alternative<OtherRecord>(*parse_line(R"({"note": "no step"})")));
  CHECK(std::get<OtherRecord>(*parse_line(R"({"type":"summary","step":3})")).step == 3);
}

TEST_CASE("Python's NaN, Infinity and -Infinity (json.dumps) read as null, but not inside strings") {
  const UserRecord u = std::get<UserRecord>(*parse_line(R"({"step": 2, "loss": NaN, "g": -Infinity, "h": Infinity, "s": "NaN"})"));
  REQUIRE(u.values.size() == 3);
  CHECK(std::isnan(u.values[0].second));
  CHECK(std::isnan(u.values[1].second));
  CHECK(std::isnan(u.values[2].second));
  CHECK_FALSE(parse_line(R"({"step": 2, "loss": NaNa})").has_value());
  CHECK_FALSE(parse_line(R"({"step": 2, "loss": nan})").has_value());
}

TEST_CASE("not JSON: nullopt; an incomplete typed record: an error naming where, or (no where) an other record") {
  CHECK_FALSE(parse_line("{\"type\":\"step\",\"st").has_value());
  CHECK_FALSE(parse_line("[1,2]").has_value());
  CHECK_FALSE(parse_line("{\"type\":\"step\",\"step\":1,\"loss\":-nan}").has_value());  // the old trainer's output
  CHECK_THROWS_WITH(parse_line("{\"type\":\"step\",\"step\":1}", "m.jsonl:4"),
                    doctest::Contains("m.jsonl:4: step record without a numeric \"loss\""));
  CHECK_THROWS_WITH(parse_line("{\"type\":\"validation\",\"step\":1}", "m.jsonl:5"),
                    doctest::Contains("m.jsonl:5: validation record without numeric \"step\" and \"val_loss\""));
  auto quiet = parse_line("{\"type\":\"step\",\"step\":3}");
  REQUIRE(quiet);
  CHECK(std::holds_alternative<OtherRecord>(*quiet));
  CHECK(step_of(*quiet) == 3);
}

TEST_CASE("the reader reads top-level fields only; a key given twice keeps its place and its last value") {
  const UserRecord u = std::get<UserRecord>(
      *parse_line(R"({"step": 4, "a": 1, "nested": {"b": 2, "step": 9, "c": [3]}, "list": [4, 5], "a": 6, "d": true})"));
  CHECK(u.step == 4);  // the nested "step" is not the record's
  REQUIRE(u.values.size() == 1);
  CHECK(u.values[0] == std::pair<std::string, double>{"a", 6});
  const RunEnd e = std::get<RunEnd>(*parse_line(
      R"({"type":"run_end","step":7,"status":"nonfinite","nonfinite_step":5,"nonfinite_ranks":[2,[9],{"r":8},0.5,4]})"));
  CHECK(e.nonfinite_ranks == std::vector<int>{2, 4});  // integers only, at the array's own level
  CHECK(std::holds_alternative<OtherRecord>(*parse_line("{}")));
  CHECK(std::get<OtherRecord>(*parse_line(R"({"type": {"step": 1}})")).type.empty());
  for (const char* not_object : {"3", "\"step\"", "null", "[{\"step\":1}]", "{\"step\":1} x", "{\"step\":1}{}", ""})
    CHECK_FALSE(parse_line(not_object).has_value());
}

// The fast reader (FlatReader) takes the common lines; a line with an escape in a key goes to nlohmann-json's.
// Each line read both ways reads the same (the escaped key is "z", left out where it is a value).
TEST_CASE("the fast reader reads the common lines as nlohmann-json does, and refuses what is not JSON") {
  const char* lines[] = {
      R"({"type":"step","epoch":1,"step":12,"loss":0.25,"lr":1e-3,"samples_per_s":2500.5,"step_time_s":0.1,"allreduce_s":0,"data_wait_s":1E-2,"cpu_s":-0,"time":1700000000.123})",
      R"( { "type" : "validation" , "step" : 100 , "val_loss" : null , "time_s" : 2.5e+0 , "wall_s" : 3 } )",
      R"({"type":"step","step":1,"loss":null,"skipped":true,"time":17e8})",
      R"({"type":"run_end","step":9,"status":"nonfinite","exit_code":3,"nonfinite_step":4,"nonfinite_ranks":[ 0 , -2 ],"last_finite_loss":0.5})",
      R"({"type":"run_start","step":0,"model":"mlp","world_size":8,"global_batch":256,"on_nonfinite":"stop"})",
      R"({"step":3,"loss":0.5,"acc":-12.75,"name":"run a","flag":false,"loss":0.25,"big":123456789012345678901234})",
      R"({"type":"eval","step":5,"nonfinite_ranks":[]})",
  };
  auto same = [](const std::optional<Record>& a, const std::optional<Record>& b) {
    REQUIRE(a);
    REQUIRE(b);
    Record x = *a, y = *b;
    if (auto* u = std::get_if<UserRecord>(&y)) {
      REQUIRE(!u->values.empty());
      CHECK(u->values.back().first == "z");
      u->values.pop_back();
    }
    CHECK(to_line(x) == to_line(y));
  };
  for (std::string line : lines) {
    CAPTURE(line);
    std::string slow = line;
    slow.insert(slow.rfind('}'), R"(,"\u007a":1)");
    same(parse_line(line, "m:1"), parse_line(slow, "m:1"));
  }
  CHECK(std::signbit(std::get<Step>(*parse_line(lines[0])).cpu_s) == false);  // -0: the integer 0
  CHECK(std::get<UserRecord>(*parse_line(lines[5])).values.front() == std::pair<std::string, double>{"loss", 0.25});
  for (const char* bad : {R"({"step":01})", R"({"step":1.})", R"({"step":.5})", R"({"step":+1})", R"({"a":1,})",
                          R"({"a" 1})", R"({"a":[1,]})", R"({"a":tru})", R"({"step":1}})", R"({"step":-})",
                          "{\"a\":\"x\x01\"}", R"({"a":1e})", R"({,})", R"({"a":"x)", "{\"step\":1"})
    CHECK_MESSAGE(!parse_line(bad).has_value(), bad);
}

}  // namespace metrics_records_test
