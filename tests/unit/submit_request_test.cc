// submit_request: the whole of `hpclaunch submit` below the CLI — plan, job directory, dependencies, one
// rendering, submission — against a fake command runner (no scheduler), in a temporary XDG_STATE_HOME. The
// Submission holds everything submit prints.
#include <doctest/doctest.h>

#include "submit/submit_request.h"
#include "test_util.h"
#include "util/error.h"
#include "util/file.h"

namespace submit_request_test {  // this file's names, apart from its unity batch's others (tests/CMakeLists.txt)

using namespace hpclaunch;
namespace fs = std::filesystem;

namespace {

// A Perlmutter job with its account (so no sacctmgr is asked) into `dir`.
SubmitRequest perlmutter_job(const fs::path& dir) {
  SubmitRequest r;
  r.request.site = "perlmutter";
  r.request.account = "m1234_g";
  r.request.command = {"python", "train.py"};
  r.job_dir = dir.string();
  return r;
}

}  // namespace

TEST_SUITE_BEGIN("submit_request");

TEST_CASE("submit_request plans, renders once, submits through the runner and returns what submit prints") {
  test::TempState t("submit-request-test");
  SubmitRequest r = perlmutter_job(t.base / "job");
  r.after = {"77:any"};
  std::vector<std::vector<std::string>> ran;
  auto run = [&](const std::vector<std::string>& argv) {
    ran.push_back(argv);
    return ProcessResult{0, "4242\n", ""};
  };
  std::vector<std::string> told;
  SubmitEvents events;
  events.submitted = [&](const Submission& s) { told.push_back("submitted " + s.job_id); };
  Submission s = submit_request(r, run, events);
  CHECK(s.job_id == "4242");
  CHECK(s.site == "perlmutter");
  CHECK(s.scheduler == Scheduler::slurm);
  CHECK(s.job_dir == r.job_dir);
  CHECK(s.script_path == r.job_dir + "/job.sh");
  CHECK(read_file(s.script_path) == s.script);
  CHECK(s.script.find("--output=" + r.job_dir + "/slurm-%j.out") != std::string::npos);  // rendered for its own dir
  CHECK(s.dependency_options == std::vector<std::string>{"--dependency=afterany:77"});
  CHECK(told == std::vector<std::string>{"submitted 4242"});
  REQUIRE(ran.size() == 1);  // --account given: no sacctmgr
  CHECK(ran[0] == std::vector<std::string>{"sbatch", "--parsable", "--dependency=afterany:77", s.script_path});
  CHECK(s.plan.account == "m1234_g");
  CHECK_FALSE(s.exit_code.has_value());
}

TEST_CASE("a dry run renders and writes nothing; a refused submission leaves no job directory") {
  test::TempState t("submit-request-dry-test");
  SubmitRequest r = perlmutter_job(t.base / "job");
  r.dry_run = true;
  int calls = 0;
  auto refuse = [&](const std::vector<std::string>&) {
    ++calls;
    return ProcessResult{1, "", "sbatch: error: Batch job submission failed: Invalid account\n"};
  };
  Submission s = submit_request(r, refuse);
  CHECK(calls == 0);
  CHECK(s.job_id.empty());
  CHECK(s.script_path.empty());
  CHECK_FALSE(fs::exists(r.job_dir));
  CHECK(s.script.rfind("#!/bin/bash", 0) == 0);

  r.dry_run = false;
  CHECK(test::error_of_call([&] { submit_request(r, refuse); }).find("refused the job") != std::string::npos);
  CHECK(calls == 1);
  CHECK_FALSE(fs::exists(r.job_dir));
}

TEST_SUITE_END();

}  // namespace submit_request_test
