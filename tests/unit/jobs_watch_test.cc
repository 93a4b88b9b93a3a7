// Watching a job (`wait`, `logs --follow`): the scheduler's hiccups tolerated alike, and a growing output file
// followed through a rewrite (a requeued job starts its output anew).
#include <doctest/doctest.h>

#include <unistd.h>

#include <filesystem>
#include <fstream>

#include "jobs/watch.h"
#include "util/error.h"
#include "util/file.h"
#include "util/line_splitter.h"
#include "test_util.h"

namespace jobs_watch_test {  // this file's names, apart from its unity batch's others (tests/CMakeLists.txt)

using namespace hpclaunch;
namespace fs = std::filesystem;

namespace {

JobRecord slurm_job() {
  JobRecord j;
  j.dir = "/nonexistent/job";
  j.submitted = true;
  j.job_id = "1000";
  j.scheduler = Scheduler::slurm;
  return j;
}

// A scheduler whose answers are given in order: "R" running, "C" completed, "x" a failure.
CommandRunner scripted(std::string answers, size_t* asked) {
  return [answers, asked](const std::vector<std::string>& argv) {
    if (argv[0] != "squeue") return ProcessResult{1, "", "sacct: no\n"};  // squeue always lists the job here
    char a = (*asked)++ < answers.size() ? answers[*asked - 1] : 'C';
    if (a == 'x') return ProcessResult{1, "", "slurm_load_jobs error: Socket timed out on send/recv operation\n"};
    return ProcessResult{0, test::squeue_line("1000", a == 'R' ? "RUNNING" : "COMPLETED", "None", 0), ""};
  };
}

}  // namespace

TEST_SUITE_BEGIN("jobs_watch");

TEST_CASE("a scheduler that never answered is an error at once") {
  size_t asked = 0;
  StateWatch watch(slurm_job(), scripted("x", &asked));
  CHECK_THROWS_WITH(watch.look(), doctest::Contains("Socket timed out"));
}

TEST_CASE("after an answer, failed looks are tolerated for the silence limit (a restarting controller)") {
  size_t asked = 0;
  StateWatch::Clock::time_point now{};
  StateWatch watch(slurm_job(), scripted("RxxxxxxxRxxxxxxx", &asked), [&] { return now; });
  std::vector<std::string> notes;
  watch.on_note([&](const std::string& n) { notes.push_back(n); });
  CHECK(watch.look()->phase == Phase::running);
  // Many quick failures within the limit (a controller refusing connections while it restarts): tolerated.
  for (int i = 0; i < StateWatch::k_tolerated_failures + 2; ++i) {
    now += std::chrono::seconds(30);
    CHECK_FALSE(watch.look().has_value());
  }
  CHECK(watch.failures() == StateWatch::k_tolerated_failures + 2);
  CHECK(watch.last_error().find("Socket timed out") != std::string::npos);
  CHECK(watch.look()->phase == Phase::running);  // an answer resets both
  CHECK(watch.failures() == 0);
  REQUIRE(notes.size() == 2);  // once when it went silent, once when it came back
  CHECK(notes[0].find("the scheduler did not answer (") == 0);
  CHECK(notes[0].find("asking again for up to 600 s") != std::string::npos);
  CHECK(notes[1] == "the scheduler answers again");
  for (int i = 0; i < StateWatch::k_tolerated_failures - 1; ++i) {
    now += StateWatch::k_tolerated_silence;  // a slow scheduler: few looks, long silence; still the minimum count
    CHECK_FALSE(watch.look().has_value());
  }
  CHECK_THROWS_WITH(watch.look(), doctest::Contains("squeue -h -r -t all -j 1000 -O JobArrayID:40|,State:24|,Reason:200|,exit_code:12|: failed"));
}

TEST_CASE("a followed file gives what it gained, and starts over when it was rewritten shorter") {
  fs::path path = fs::temp_directory_path() / ("hpclaunch-follow-" + std::to_string(::getpid()));
  fs::remove(path);
  FileFollower f(path.string());
  CHECK(f.read_new().empty());  // not there yet
  std::ofstream(path) << "[n1:0] a\n[n1:1] b";
  CHECK(f.read_new() == "[n1:0] a\n[n1:1] b");
  CHECK(f.read_new().empty());
  std::ofstream(path, std::ios::app) << "c\n";
  CHECK(f.read_new() == "c\n");
  std::ofstream(path) << "new\n";  // a requeued run's output
  CHECK(f.read_new() == "new\n");
  fs::remove(path);

  std::vector<std::string> lines;
  LineSplitter split;
  auto emit = [&](std::string_view l) { lines.emplace_back(l); };
  split.feed("[n1:0] a\n[n1:1] b", emit);
  split.feed("c\n\nd", emit);
  split.finish(emit);
  CHECK(lines == std::vector<std::string>{"[n1:0] a", "[n1:1] bc", "", "d"});
}

TEST_SUITE_END();

}  // namespace jobs_watch_test
