// submit_job: the one path of every submission, against a fake backend (no scheduler, no process), in a temporary
// directory with a temporary XDG_STATE_HOME (the user's job index is never touched). Also the job-directory files'
// structs and the local site's machine shape.
#include <doctest/doctest.h>

#include <cstdlib>
#include <filesystem>
#include <fstream>

#include "plan/local_shape.h"
#include "record/job_record.h"
#include "site/registry.h"
#include "submit/job_dir.h"
#include "submit/job_index.h"
#include "submit/submit_job.h"
#include "test_util.h"
#include "util/error.h"
#include "util/file.h"

namespace submit_job_test {  // this file's names, apart from its unity batch's others (tests/CMakeLists.txt)

using namespace hpclaunch;
namespace fs = std::filesystem;

namespace {

// A scheduler that takes or refuses every job and, if `runs_here`, runs it with exit status 3.
class FakeBackend final : public SchedulerBackend {
 public:
  bool refuse = false;
  bool runs_here = false;
  std::optional<TestVerdict> verdict;
  mutable std::vector<std::string> seen;
  Scheduler kind() const override { return runs_here ? Scheduler::local : Scheduler::slurm; }
  std::string submit(const std::string& script, const std::vector<std::string>&, const CommandRunner&) const override {
    seen.push_back("submit " + script);
    if (refuse) throw failure("sbatch", "refused the job (exit 1): no");
    return "4242";
  }
  std::optional<int> run_in_foreground(const std::string&, const std::string&, const std::string& id) const override {
    seen.push_back("run " + id);
    return runs_here ? std::optional<int>(3) : std::nullopt;
  }
  void start_detached(const std::string&, const std::string&, const std::string& id) const override {
    seen.push_back("start " + id);
  }
  std::optional<TestVerdict> test_only(const std::string& script, const std::vector<std::string>&,
                                      const CommandRunner&) const override {
    seen.push_back("test " + script);
    return verdict;
  }
  JobState query(const JobRecord&, const CommandRunner&) const override { return {}; }
  void cancel(const JobRecord&, const CommandRunner&) const override {}
  std::vector<std::string> output_files(const JobRecord&) const override { return {}; }
  std::vector<std::string> array_options(int, int) const override { return {}; }
  std::vector<std::string> dependency_options(const std::vector<Dependency>&) const override { return {}; }
};

struct TempState : test::TempState {
  TempState() : test::TempState("submit-job-test") {}
};

LaunchPlan local_plan() {
  JobRequest r;
  r.site = "local";
  r.nodes = 2;
  r.command = {"true"};
  return make_plan(r, builtin_sites().get("local"));
}

}  // namespace

TEST_SUITE_BEGIN("submit_job");

TEST_CASE("an accepted job gets job.json, an index entry and a record that reads back") {
  TempState t;
  FakeBackend backend;
  std::string dir = (t.base / "job").string();
  std::vector<std::string> told;
  SubmitSteps steps;
  steps.on_submitted = [&](const JobRecord& r) { told.push_back(r.job_id); };
  SubmittedJob job = submit_job(local_plan(), "#!/bin/bash\ntrue\n", dir, backend, nullptr, steps);
  CHECK(job.record.job_id == "4242");
  CHECK(job.record.scheduler == Scheduler::slurm);
  CHECK(job.record.nodes == 2);
  CHECK(job.record.site == "local");
  CHECK_FALSE(job.exit_code.has_value());
  CHECK(told == std::vector<std::string>{"4242"});
  CHECK(backend.seen == std::vector<std::string>{"submit " + dir + "/job.sh", "run 4242"});
  CHECK(read_job_index() == std::vector<std::string>{dir});
  auto text = read_file(dir + "/job.json");
  REQUIRE(text);
  SubmissionFile sub = nlohmann::json::parse(*text).get<SubmissionFile>();
  CHECK(sub.job_dir == dir);
  CHECK(nlohmann::json::parse(*text)["scheduler"] == "slurm");
}

TEST_CASE("a job the backend runs here reports its exit status") {
  TempState t;
  FakeBackend backend;
  backend.runs_here = true;
  SubmittedJob job = submit_job(local_plan(), "#!/bin/bash\n", (t.base / "job").string(), backend, nullptr);
  CHECK(job.exit_code == 3);
  CHECK(job.record.scheduler == Scheduler::local);
}

TEST_CASE("--detach: the backend starts the job in the background; submit_job has no exit status to report") {
  TempState t;
  FakeBackend backend;
  backend.runs_here = true;
  SubmitSteps steps;
  steps.detach = true;
  std::string dir = (t.base / "job").string();
  SubmittedJob job = submit_job(local_plan(), "#!/bin/bash\n", dir, backend, nullptr, steps);
  CHECK_FALSE(job.exit_code.has_value());
  CHECK(backend.seen == std::vector<std::string>{"submit " + dir + "/job.sh", "start 4242"});
}

TEST_CASE("submitted_at is RFC 3339 with the UTC offset, so a job's time reads the same in any zone") {
  TempState t;
  FakeBackend backend;
  std::string dir = (t.base / "job").string();
  submit_job(local_plan(), "#!/bin/bash\n", dir, backend, nullptr);
  std::string at = nlohmann::json::parse(*read_file(dir + "/job.json"))["submitted_at"];
  REQUIRE(at.size() == 25);
  CHECK(at[4] == '-');
  CHECK(at[10] == 'T');
  CHECK((at[19] == '+' || at[19] == '-'));
  CHECK(at[22] == ':');
  // 1 s after the epoch, in UTC.
  const char* saved = std::getenv("TZ");
  std::string old = saved ? saved : "";
  ::setenv("TZ", "UTC", 1);
  ::tzset();
  CHECK(rfc3339(1) == "1970-01-01T00:00:01+00:00");
  ::setenv("TZ", "EET-2", 1);  // POSIX: two hours east of UTC, no tz database needed
  ::tzset();
  CHECK(rfc3339(1) == "1970-01-01T02:00:01+02:00");
  if (saved) ::setenv("TZ", old.c_str(), 1);
  else ::unsetenv("TZ");
  ::tzset();
}

TEST_CASE("a refused job leaves no directory and no index entry") {
  TempState t;
  FakeBackend backend;
  backend.refuse = true;
  std::string dir = (t.base / "job").string();
  CHECK_THROWS_WITH(submit_job(local_plan(), "#!/bin/bash\n", dir, backend, nullptr), doctest::Contains("refused the job"));
  CHECK_FALSE(fs::exists(dir));
  CHECK(read_job_index().empty());
}

TEST_CASE("--check: a refused validation submits nothing and leaves nothing; an accepted one goes on") {
  TempState t;
  FakeBackend backend;
  backend.verdict = TestVerdict{false, "sbatch: error: Batch job submission failed: Node count specification invalid"};
  std::string dir = (t.base / "job").string();
  SubmitSteps steps;
  steps.validate = true;
  std::vector<std::string> heard;
  steps.on_verdict = [&](const TestVerdict& v) { heard.push_back(v.message); };
  CHECK_THROWS_WITH(submit_job(local_plan(), "#!/bin/bash\n", dir, backend, nullptr, steps),
                    "--check: the scheduler would refuse the job: sbatch: error: Batch job submission failed: Node count "
                    "specification invalid; fix what the scheduler names; nothing was submitted");
  CHECK(backend.seen == std::vector<std::string>{"test " + dir + "/job.sh"});
  CHECK(heard.size() == 1);
  CHECK_FALSE(fs::exists(dir));
  CHECK(read_job_index().empty());
  backend.verdict = TestVerdict{true, "sbatch: Job 7 to start at now"};
  backend.seen.clear();
  CHECK(submit_job(local_plan(), "#!/bin/bash\n", dir, backend, nullptr, steps).record.job_id == "4242");
  CHECK(backend.seen.at(1) == "submit " + dir + "/job.sh");
  steps.validate = false;  // without --check the scheduler is not asked to validate
  backend.seen.clear();
  submit_job(local_plan(), "#!/bin/bash\n", (t.base / "job2").string(), backend, nullptr, steps);
  CHECK(backend.seen.front().rfind("submit", 0) == 0);
}

TEST_CASE("job files: the structs write what the readers read, and plan.json's summary comes from the plan") {
  SubmissionFile sub{"12.pbs", Scheduler::pbs, "polaris", "/j", "20261122-100000", 4};
  nlohmann::json j = sub;
  CHECK(j["scheduler"] == "pbs");
  SubmissionFile back = j.get<SubmissionFile>();
  CHECK(back.job_id == "12.pbs");
  CHECK(back.scheduler == Scheduler::pbs);
  CHECK(back.nodes == 4);
  LocalStateFile running{77, "running", std::nullopt};
  CHECK(nlohmann::json(running).dump() == R"({"pid":77,"state":"running"})");
  LocalStateFile exited = nlohmann::json::parse(R"({"pid":77,"state":"exited","exit_code":143})").get<LocalStateFile>();
  CHECK(exited.exit_code == 143);
  nlohmann::json plan = plan_file(local_plan());
  PlanFile read = plan.get<PlanFile>();
  CHECK(read.scheduler == Scheduler::local);
  CHECK(read.nodes == 2);
  CHECK(read.command == std::vector<std::string>{"true"});
  CHECK(nlohmann::json(read) == plan);  // every field written reads back
  // The keys plan.json has always had (jobs written by an older hpclaunch read the same).
  std::vector<std::string> keys;
  for (const auto& [key, value] : plan.items()) keys.push_back(key);
  CHECK(keys == std::vector<std::string>{"account", "command", "constraint", "container", "cpus_per_node",
                                         "cpus_per_task", "env", "gpus_per_node", "job_name", "launcher",
                                         "max_requeues", "memory", "modules", "nodes", "ntasks", "ntasks_per_node",
                                         "partition", "preflight", "qos", "requeue", "scheduler", "site",
                                         "site_file", "threads_per_worker", "time", "time_seconds", "warning_seconds",
                                         "warning_signal", "warnings", "workers_per_node", "world_size"});
}

TEST_CASE("the local site's nodes take this machine's cores and the slots asked for; other sites keep theirs") {
  SiteRegistry reg = builtin_sites();
  JobRequest r;
  r.nodes = 2;
  r.gpus_per_node = 2;
  SiteProfile local = with_machine_shape(reg.get("local"), r, 8);
  CHECK(local.node.gpus == 2);
  CHECK(local.node.cores == 4);
  r.nodes = 16;  // fewer cores than nodes: each emulated node still has a core per worker
  CHECK(with_machine_shape(reg.get("local"), r, 2).node.cores == 2);
  SiteProfile pm = reg.get("perlmutter");
  CHECK(with_machine_shape(pm, r, 2).node.cores == pm.node.cores);
}

TEST_SUITE_END();

}  // namespace submit_job_test
