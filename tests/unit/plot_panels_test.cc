// What `hpclaunch plot` draws: the six panels, their scales and units, the smoothing, the runs' names.
#include <doctest/doctest.h>

#include <cmath>

#include "plot/panels.h"

namespace plot_panels_test {  // this file's names, apart from its unity batch's others (tests/CMakeLists.txt)

using namespace hpclaunch;

namespace {

RunCurves run(double first_loss, double last_loss, double seconds_per_step, int steps) {
  RunCurves m;
  m.path = "m.jsonl";
  m.curves = {{"loss", {}}, {"lr", {}}, {"samples_per_s", {}}, {"val_loss", {}}};
  for (int i = 1; i <= steps; ++i) {
    double t = static_cast<double>(i - 1) / std::max(1, steps - 1);
    m.curves[0].points.push_back({i, i * seconds_per_step, first_loss + (last_loss - first_loss) * t});
    m.curves[1].points.push_back({i, i * seconds_per_step, 0.001});
    m.curves[2].points.push_back({i, i * seconds_per_step, 500});
  }
  m.curves[3].points.push_back({steps, steps * seconds_per_step + 1, last_loss});
  return m;
}

}  // namespace

TEST_SUITE_BEGIN("plot_panels");

TEST_CASE("six panels: the loss (validation over training), learning rate and throughput, by step and by time") {
  auto panels = make_panels({run(2, 1, 0.5, 10)}, {"a"});
  REQUIRE(panels.size() == 6);
  CHECK(panels[0].title == "Loss vs step");
  CHECK(panels[1].title == "Loss vs wall time");
  CHECK(panels[2].title == "Learning rate vs step");
  CHECK(panels[5].title == "Throughput vs wall time");
  CHECK(panels[0].x_label == "step");
  CHECK(panels[1].x_label == "wall time (s)");
  CHECK(panels[4].y_label == "samples/s");
  CHECK(panels[0].x_min == 1);
  CHECK(panels[0].x_max == 10);
  // The loss panel: the raw training loss faint, its smoothed line, and validation over them, one scale.
  REQUIRE(panels[0].series.size() == 3);
  CHECK(panels[0].series[0].style == Series::Style::faint);
  CHECK(panels[0].series[1].style == Series::Style::line);
  CHECK(panels[0].series[1].label == "a: training");
  CHECK(panels[0].series[2].style == Series::Style::points);
  CHECK(panels[0].series[2].label == "a: validation");
  CHECK(panels[0].series[2].y.size() == 1);
  CHECK(panels[0].series[2].colour == 1);  // a lone run's validation gets a colour of its own
  CHECK(panels[0].series[1].colour == 0);
  CHECK(panels[1].series[1].x.back() == doctest::Approx(5));
  CHECK(panels[0].y_min < 1);
  CHECK(panels[0].y_max > 2);
  // The learning rate is not smoothed; the throughput is.
  CHECK(panels[2].series.size() == 1);
  CHECK(panels[4].series.size() == 2);
  // --smooth 0: the raw lines alone.
  auto raw = make_panels({run(2, 1, 0.5, 10)}, {"a"}, 0);
  CHECK(raw[0].series.size() == 2);
  CHECK(raw[0].series[0].style == Series::Style::line);
}

TEST_CASE("smoothing is TensorBoard's debiased EMA; a NaN stays a gap and does not enter it") {
  auto s = smooth({1, 3, NAN, 5}, 0.5);
  REQUIRE(s.size() == 4);
  CHECK(s[0] == doctest::Approx(1));  // debiased: the first value is itself, not pulled toward 0
  CHECK(s[1] == doctest::Approx((0.25 + 1.5) / 0.75));  // last = 0.5*0.5 + 0.5*3; debias 1 - 0.25
  CHECK(std::isnan(s[2]));
  CHECK(s[3] == doctest::Approx((0.875 + 2.5) / 0.875));  // last = 0.5*1.75 + 0.5*5; debias 1 - 0.125
  CHECK(smooth({2, 2, 2}, 0.9) == std::vector<double>{2, 2, 2});
  CHECK(smooth({1, 5}, 0) == std::vector<double>{1, 5});
}

TEST_CASE("loss goes logarithmic when it spans more than a factor of 20") {
  CHECK_FALSE(make_panels({run(2, 1, 0.5, 10)}, {"a"})[0].log_y);
  auto panels = make_panels({run(100, 0.5, 0.5, 10)}, {"a"});
  CHECK(panels[0].log_y);
  CHECK(panels[0].y_min > 0);
  CHECK_FALSE(panels[2].log_y);  // the learning rate stays linear
  CHECK_FALSE(wants_log_scale({-1, 100}));
  CHECK_FALSE(wants_log_scale({}));
}

TEST_CASE("the wall-time unit follows the longest run") {
  CHECK(std::string(time_unit_for(90).name) == "s");
  CHECK(std::string(time_unit_for(600).name) == "min");
  CHECK(std::string(time_unit_for(20000).name) == "h");
  auto panels = make_panels({run(2, 1, 1, 10), run(2, 1, 60, 10)}, {"fast", "slow"});
  CHECK(panels[1].x_label == "wall time (min)");
  const Series& slow = panels[1].series[4];  // fast's raw, training, validation; then slow's raw, training
  CHECK(slow.label == "slow: training");
  CHECK(slow.x.back() == doctest::Approx(10));
  CHECK(slow.run == 1);
  CHECK(panels[5].series[3].label == "slow");  // throughput: one curve per run, named by the run alone
}

TEST_CASE("runs are named by file, else by directory, else by path") {
  CHECK(run_labels({"/a/x.jsonl", "/a/y.jsonl"}) == std::vector<std::string>{"x.jsonl", "y.jsonl"});
  CHECK(run_labels({"/j/run1/metrics.jsonl", "/j/run2/metrics.jsonl"}) == std::vector<std::string>{"run1", "run2"});
  CHECK(run_labels({"/a/r/metrics.jsonl", "/b/r/metrics.jsonl"}) == std::vector<std::string>{"/a/r/metrics.jsonl", "/b/r/metrics.jsonl"});
}

TEST_CASE("a non-finite value stays in the series as NaN (a gap), out of the ranges, and its step is marked") {
  RunCurves m = run(2, 1, 0.5, 10);
  m.curves[0].points[4].value = NAN;
  m.marks.push_back({5, 2.5, "non-finite loss"});
  auto panels = make_panels({m}, {"a"});
  CHECK(std::isnan(panels[0].series[0].y[4]));
  CHECK(panels[0].y_max < 3);
  CHECK(panels[0].y_min > 0);
  CHECK(panels[0].marks == std::vector<double>{5});
  CHECK(panels[1].marks == std::vector<double>{2.5});
  CHECK(panels[4].marks == std::vector<double>{5});  // every panel shows where
  CHECK(std::isnan(panels[0].series[1].y[4]));  // the smoothed line has the same gap
  CHECK_FALSE(wants_log_scale({NAN, 1, 2}));
  CHECK(wants_log_scale({NAN, 1, 100}));
  auto notes = plot_notes(m);
  REQUIRE(notes.size() == 1);
  CHECK(notes[0] == "m.jsonl: non-finite loss at step 5, marked in red");
}

TEST_CASE("a user log's further fields get two panels each, after the three; notes name what was drawn") {
  RunCurves user;
  user.path = "u.jsonl";
  user.user_log = true;
  user.curves = {{"loss", {{1, 0, 1.0}, {2, 1, 0.5}}}, {"acc", {{1, 0, 0.2}, {2, 1, 0.6}}}};
  user.not_drawn = {"epoch"};
  auto panels = make_panels({run(2, 1, 0.5, 10), user}, {"a", "u"});
  REQUIRE(panels.size() == 8);
  CHECK(panels[6].title == "acc vs step");
  CHECK(panels[7].title == "acc vs wall time");
  CHECK(panels[6].series[0].x.empty());  // the trainer's run has no such field
  CHECK(panels[6].series[1].y == std::vector<double>{0.2, 0.6});
  CHECK(panels[0].series.back().label == "u: validation");
  CHECK(panels[0].series.back().x.empty());  // and the user's no validation loss
  auto notes = plot_notes(user);
  REQUIRE(notes.size() == 1);
  CHECK(notes[0] == "u.jsonl: JSON lines without \"type\" (not hpclaunch-train's): drew loss, acc; not drawn (counters and clocks): epoch");
  CHECK(plot_notes(run(2, 1, 0.5, 10)).empty());
}

}  // namespace plot_panels_test
