// Flux's backend (launcher/schedulers/flux/backend.cc) on a fake command runner that answers as the stand-in `flux`
// (tests/schedulers/flux/) answered: flux batch, one flux jobs for every job asked about, flux cancel, flux job kill.
#include <doctest/doctest.h>

#include <filesystem>
#include <map>

#include "schedulers/flux/backend.h"
#include "submit/submit_request.h"
#include "test_util.h"
#include "util/file.h"

namespace flux_backend_test {  // this file's names, apart from its unity batch's others (tests/CMakeLists.txt)

using namespace hpclaunch;
namespace fs = std::filesystem;

namespace {

// What was run, and the answer to each command by its first two words ("flux jobs").
struct FakeFlux {
  std::vector<std::vector<std::string>> ran;
  std::map<std::string, ProcessResult> answers;
  CommandRunner runner() {
    return [this](const std::vector<std::string>& argv) {
      ran.push_back(argv);
      auto it = answers.find(argv.at(0) + " " + (argv.size() > 1 ? argv[1] : ""));
      return it == answers.end() ? ProcessResult{127, "", argv[0] + ": not found"} : it->second;
    };
  }
};

JobRecord flux_job(const std::string& id, const std::string& dir = "/nonexistent/flux-job") {
  JobRecord j;
  j.dir = dir;
  j.submitted = true;
  j.job_id = id;
  j.scheduler = Scheduler::flux;
  return j;
}

const char* k_jobs_format = "{id.f58plain}|{status}|{returncode}|{inactive_reason}";

}  // namespace

TEST_SUITE_BEGIN("flux_backend");

TEST_CASE("submit: flux batch with the dependencies, the f58 id kept plain; a refusal in flux's words") {
  FakeFlux flux;
  flux.answers["flux batch"] = {0, "\xc6\x92" "3FD5vXZ\n", ""};
  const SchedulerBackend& backend = backend_for(Scheduler::flux);
  CHECK(&backend == &flux_backend());
  CHECK(backend.submit("/j/job.sh", {"--dependency=afterok:f2UzHM"}, flux.runner()) == "f3FD5vXZ");
  CHECK(flux.ran.back() == std::vector<std::string>{"flux", "batch", "--dependency=afterok:f2UzHM", "/j/job.sh"});
  flux.answers["flux batch"] = {1, "", "flux-batch: ERROR: unsatisfiable request: 3 nodes, the instance has 2\n"};
  CHECK(test::error_of_call([&] { backend.submit("/j/job.sh", {}, flux.runner()); })
            .find("flux batch: refused the job (exit 1): flux-batch: ERROR: unsatisfiable request") == 0);
  CHECK_FALSE(backend.dialect().capabilities().test_only);
  CHECK(test::error_of_call([&] { backend.survey("user", flux.runner()); }).find("has no scheduler to ask") != std::string::npos);
}

TEST_CASE("status: one flux jobs for every job asked about; a purged job is what its directory shows") {
  test::TempState t("flux-backend-test");
  const std::string dir = (t.base / "job").string();
  fs::create_directories(dir);
  FakeFlux flux;
  flux.answers["flux jobs"] = {0, "f2UzHM|COMPLETED|0|Exit 0\nf67WXMy|FAILED|3|Exit 3\nfCW9RpB|RUN||\n", "JobID fGone1 unknown\n"};
  std::vector<JobRecord> jobs = {flux_job("f2UzHM", dir), flux_job("\xc6\x92" "67WXMy", dir), flux_job("fCW9RpB", dir),
                                 flux_job("fGone1", dir)};
  jobs.push_back(flux_job("fNever"));
  jobs.back().submitted = false;
  const SchedulerBackend& backend = flux_backend();
  std::vector<JobAnswer> a = backend.query_many(jobs, flux.runner());
  REQUIRE(flux.ran.size() == 1);
  CHECK(flux.ran[0] == std::vector<std::string>{"flux", "jobs", "-a", "-n", "-o", k_jobs_format, "f2UzHM",
                                                "\xc6\x92" "67WXMy", "fCW9RpB", "fGone1"});
  REQUIRE(a.size() == 5);
  CHECK(describe(*a[0].state) == "COMPLETED");
  CHECK(describe(*a[1].state) == "FAILED (exit 3)");
  CHECK(a[2].state->phase == Phase::running);
  CHECK(a[3].state->phase == Phase::finished_unknown);  // purged, and no output.log
  CHECK(a[4].error.find("never accepted by a scheduler") != std::string::npos);
  write_file_atomic(dir + "/output.log", "done\n");
  CHECK(backend.query(flux_job("fGone1", dir), flux.runner()).phase == Phase::finished_unknown);

  // Flux that cannot be asked: the command and its words.
  flux.answers["flux jobs"] = {1, "", "flux-jobs: ERROR: Unable to connect to Flux: broker socket not found\n"};
  CHECK(test::error_of_call([&] { backend.query(flux_job("f2UzHM", dir), flux.runner()); })
            .find("flux jobs -a -n -o " + std::string(k_jobs_format) + " f2UzHM: failed (exit 1): flux-jobs: ERROR: Unable "
                  "to connect to Flux") == 0);
}

TEST_CASE("cancel: flux cancel; an ended job has nothing to cancel. cancel --signal: flux job kill --signal=N") {
  test::TempState t("flux-backend-test");
  const std::string dir = (t.base / "job").string();
  fs::create_directories(dir);
  FakeFlux flux;
  flux.answers["flux cancel"] = {0, "", ""};
  flux_backend().cancel(flux_job("fCW9RpB", dir), flux.runner());
  CHECK(flux.ran.back() == std::vector<std::string>{"flux", "cancel", "fCW9RpB"});
  flux.answers["flux cancel"] = {1, "", "flux-cancel: ERROR: f2UzHM: job is inactive\n"};
  CHECK(test::error_of_call([&] { flux_backend().cancel(flux_job("f2UzHM", dir), flux.runner()); }) ==
        "flux: job f2UzHM is unknown to the scheduler (it has finished); nothing to cancel");

  flux.answers["flux job"] = {0, "", ""};
  flux_signal(flux_job("fCW9RpB", dir), 10, flux.runner());
  CHECK(flux.ran.back() == std::vector<std::string>{"flux", "job", "kill", "--signal=10", "fCW9RpB"});
  flux.answers["flux job"] = {1, "", "flux-job: kill f2UzHM: job is not running\n"};
  CHECK(test::error_of_call([&] { flux_signal(flux_job("f2UzHM", dir), 10, flux.runner()); }) ==
        "f2UzHM: is not running: flux-job: kill f2UzHM: job is not running; nothing to signal");
  CHECK(flux_backend().output_files(flux_job("f2UzHM", dir)) == std::vector<std::string>{dir + "/output.log"});
}

TEST_CASE("a sweep on a Flux site is a job per task: each its own flux batch, each task's state in the one query") {
  test::TempState t("flux-backend-test");
  const std::string dir = (t.base / "sweep").string();
  FakeFlux flux;
  int next = 0;
  const char* ids[] = {"fA1", "fA2", "fA3"};
  CommandRunner run = [&](const std::vector<std::string>& argv) {
    flux.ran.push_back(argv);
    if (argv.at(1) == "batch") return ProcessResult{0, std::string(ids[next++]) + "\n", ""};
    return ProcessResult{0, "fA1|COMPLETED|0|Exit 0\nfA2|RUN||\nfA3|DEPEND||\n", ""};
  };
  SubmitRequest o;
  o.job_dir = dir;
  o.request.site = "el-capitan";
  o.request.nodes = 1;
  o.request.command = {"python", "train.py"};
  o.request.array.count = 3;
  o.request.array.max_concurrent = 2;
  o.request.array.count_origin = "--array";
  Submission s = submit_request(o, run);
  CHECK(s.per_task);
  CHECK(s.task_job_ids == std::vector<std::string>{"fA1", "fA2", "fA3"});
  REQUIRE(flux.ran.size() == 3);
  CHECK(flux.ran[2] == std::vector<std::string>{"flux", "batch", "--dependency=afterany:fA1", dir + "/tasks/2/job.sh"});
  JobRecord job = read_job_record(dir);
  REQUIRE(job.is_array());
  std::vector<JobState> tasks = flux_backend().query_tasks(job, run);
  REQUIRE(tasks.size() == 3);
  CHECK(tasks[0].phase == Phase::completed);
  CHECK(tasks[1].phase == Phase::running);
  CHECK(tasks[2].phase == Phase::pending);
  CHECK(flux.ran.back() == std::vector<std::string>{"flux", "jobs", "-a", "-n", "-o", k_jobs_format, "fA1", "fA2", "fA3"});
}

TEST_SUITE_END();

}  // namespace flux_backend_test
