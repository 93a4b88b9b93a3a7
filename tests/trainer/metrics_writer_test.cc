// The trainer's metrics file across restarts (trainer/metrics_writer.h): on --resume the records past the
// checkpoint's step go, so every step is in the file once.
#include <doctest/doctest.h>

#include <filesystem>
#include <unistd.h>
#include <fstream>
#include <sstream>

#include "metrics_writer.h"

using namespace hpctrain;

namespace {
std::string step(int n) { return "{\"type\":\"step\",\"epoch\":1,\"step\":" + std::to_string(n) + ",\"loss\":0.5}\n"; }
std::string val(int n) { return "{\"type\":\"validation\",\"epoch\":1,\"step\":" + std::to_string(n) + ",\"val_loss\":0.4}\n"; }
}  // namespace

TEST_CASE("metrics past the resumed step go, the rest stays in order") {
  const std::string text = step(1) + step(2) + val(2) + step(3) + step(4) + val(4) + step(5);
  CHECK(metrics_up_to(text, 5) == text);
  CHECK(metrics_up_to(text, 100) == text);
  CHECK(metrics_up_to(text, 3) == step(1) + step(2) + val(2) + step(3));
  CHECK(metrics_up_to(text, 2) == step(1) + step(2) + val(2));
  CHECK(metrics_up_to(text, 0) == "");
  CHECK(metrics_up_to("", 7) == "");
}

TEST_CASE("step 10 is not step 1: the whole number counts") {
  CHECK(metrics_up_to(step(10) + step(11), 1) == "");
  CHECK(metrics_up_to(step(9) + step(10), 9) == step(9));
}

TEST_CASE("a record cut off by a kill goes; lines without a step stay") {
  const std::string cut = step(1) + "{\"type\":\"step\",\"epoch\":1,\"st";
  CHECK(metrics_up_to(cut, 9) == step(1));
  CHECK(metrics_up_to(step(1) + "{\"type\":\"note\"}\n" + step(2), 1) == step(1) + "{\"type\":\"note\"}\n");
}

TEST_CASE("on resume the file is rewritten without the records past the step, and the lines that went are counted; no file is 0") {
  const auto dir = std::filesystem::temp_directory_path() / ("metrics-writer-test-" + std::to_string(::getpid()));
  std::filesystem::create_directories(dir);
  const std::string path = (dir / "m.jsonl").string();
  CHECK(truncate_metrics_file(path, 3) == 0);  // no file yet
  std::ofstream(path) << step(1) + step(2) + step(3) + step(4) + "{\"ty";
  CHECK(truncate_metrics_file(path, 2) == 3);
  std::ifstream in(path);
  std::ostringstream s;
  s << in.rdbuf();
  CHECK(s.str() == step(1) + step(2));
  CHECK(truncate_metrics_file(path, 2) == 0);
  std::filesystem::remove_all(dir);
}

TEST_CASE("records are read as JSON: a step's place in the line, spaces and a run's end do not matter") {
  const std::string spaced = "{\"loss\": null, \"type\": \"step\", \"step\" : 4}\n";
  const std::string end = "{\"type\":\"run_end\",\"step\":6,\"status\":\"nonfinite\",\"nonfinite_step\":6}\n";
  CHECK(metrics_up_to(step(3) + spaced + end, 3) == step(3));
  CHECK(metrics_up_to(step(3) + spaced + end, 5) == step(3) + spaced);
  // A "step" inside a nested object is not the record's step.
  const std::string other = "{\"type\":\"note\",\"detail\":{\"step\":99}}\n";
  CHECK(metrics_up_to(other + step(1), 1) == other + step(1));
}
