// Submitting (and requeueing) through each backend: the exact command lines, the parsing of every answer (recorded
// from the test cluster's Slurm 22.05 and from OpenPBS's documented qsub output), test-only validation, arrays,
// dependencies.
#include <doctest/doctest.h>

#include "schedulers/pbs/backend.h"
#include "schedulers/slurm/backend.h"
#include "test_util.h"
#include "util/error.h"

namespace scheduler_submit_test {  // this file's names, apart from its unity batch's others (tests/CMakeLists.txt)

using namespace hpclaunch;

TEST_SUITE_BEGIN("scheduler_submit");

namespace {

// Runs `backend.submit` against a fake that answers `answer` and records the command line.
std::string submit_with(const SchedulerBackend& backend, ProcessResult answer, std::vector<std::string>* seen) {
  return backend.submit("/j/job.sh", {}, [&](const std::vector<std::string>& argv) {
    *seen = argv;
    return answer;
  });
}

}  // namespace

TEST_CASE("each backend submits with its own command and reads the id from its answer") {
  std::vector<std::string> seen;
  CHECK(submit_with(backend_for(Scheduler::slurm), {0, "4242\n", ""}, &seen) == "4242");
  CHECK(seen == std::vector<std::string>{"sbatch", "--parsable", "/j/job.sh"});
  CHECK(submit_with(backend_for(Scheduler::pbs), {0, "0.pbshost\n", ""}, &seen) == "0.pbshost");
  CHECK(seen == std::vector<std::string>{"qsub", "/j/job.sh"});
  CHECK(backend_for(Scheduler::local).kind() == Scheduler::local);
  CHECK(backend_for(Scheduler::local).submit("/j/job.sh", {}, nullptr).rfind("local-", 0) == 0);
}

TEST_CASE("job ids are read from each scheduler's answer") {
  CHECK(parse_sbatch_answer({0, "4242\n", ""}) == "4242");
  CHECK(parse_sbatch_answer({0, "4242;perlmutter\n", ""}) == "4242");
  CHECK(parse_qsub_answer({0, "0.pbshost\n", ""}) == "0.pbshost");
  CHECK(parse_qsub_answer({0, "123[].pbs01\n", ""}) == "123[].pbs01");
}

TEST_CASE("a refusal or a garbled answer is an error quoting the scheduler") {
  CHECK_THROWS_WITH(parse_sbatch_answer({1, "", "sbatch: error: Invalid account or account/partition combination specified\n"}),
                    "sbatch: refused the job (exit 1): sbatch: error: Invalid account or account/partition combination specified; fix what the scheduler names; nothing was submitted");
  CHECK_THROWS_WITH(parse_qsub_answer({2, "", "qsub: Unknown resource: foo\n"}),
                    "qsub: refused the job (exit 2): qsub: Unknown resource: foo; fix what the scheduler names; nothing was submitted");
  CHECK_THROWS_WITH(parse_sbatch_answer({0, "Submitted batch job\n", ""}),
                    "sbatch: answered 'Submitted batch job', which holds no job id; check the scheduler's state with squeue/qstat");
  CHECK_THROWS_WITH(parse_sbatch_answer({127, "", "sbatch: command not found"}),
                    "sbatch: not found on this machine (sbatch: command not found); run hpclaunch on the cluster's login node, or use --dry-run to only render");
  try {
    parse_sbatch_answer({1, "", "x"});
    FAIL("no error");
  } catch (const Error& e) {
    CHECK(e.exit_code() == k_exit_failure);
  }
}

TEST_CASE("sbatch --test-only: an acceptance and a refusal, in sbatch's words") {
  std::vector<std::string> seen;
  auto accepted = backend_for(Scheduler::slurm).test_only("/j/job.sh", {}, [&](const std::vector<std::string>& argv) {
    seen = argv;
    return ProcessResult{0, "", "sbatch: Job 7 to start at 2026-11-22T16:40:00 using 2 processors on nodes n[1-2] in partition debug\n"};
  });
  CHECK(seen == std::vector<std::string>{"sbatch", "--test-only", "/j/job.sh"});
  REQUIRE(accepted);
  CHECK(accepted->accepted);
  CHECK(accepted->message.find("to start at") != std::string::npos);
  TestVerdict refused = parse_sbatch_test_only(
      {1, "", "sbatch: error: Batch job submission failed: Requested node configuration is not available\n"});
  CHECK_FALSE(refused.accepted);
  CHECK(refused.message == "sbatch: error: Batch job submission failed: Requested node configuration is not available");
  CHECK_THROWS_WITH(parse_sbatch_test_only({127, "", "sbatch: not found"}), doctest::Contains("not found on this machine"));
  CHECK_FALSE(backend_for(Scheduler::pbs).test_only("/j/job.sh", {}, nullptr).has_value());
}

TEST_CASE("arrays and dependencies in each scheduler's syntax") {
  const auto& slurm = backend_for(Scheduler::slurm);
  const auto& pbs = backend_for(Scheduler::pbs);
  CHECK(slurm.array_options(4, 0) == std::vector<std::string>{"--array=0-3"});
  CHECK(slurm.array_options(4, 2) == std::vector<std::string>{"--array=0-3%2"});
  CHECK(pbs.array_options(4, 0) == std::vector<std::string>{"-J 0-3"});
  CHECK(pbs.array_options(4, 2) == std::vector<std::string>{"-J 0-3%2"});
  CHECK(pbs.array_options(1, 0) == std::vector<std::string>{"-J 0-1:2"});  // qsub refuses 0-0
  std::vector<Dependency> after = {{"11", DependencyKind::ok}, {"12", DependencyKind::any}, {"13", DependencyKind::ok}};
  CHECK(slurm.dependency_options(after) == std::vector<std::string>{"--dependency=afterok:11:13,afterany:12"});
  CHECK(pbs.dependency_options({{"5.pbs", DependencyKind::notok}}) == std::vector<std::string>{"-W depend=afternotok:5.pbs"});
  CHECK(slurm.dependency_options({}).empty());
  CHECK(backend_for(Scheduler::local).array_options(3, 1).empty());
}

TEST_CASE("--after: its forms, and the dependency on each scheduler's submit command line") {
  CHECK(to_string(parse_dependency("123")) == "afterok:123");
  CHECK(to_string(parse_dependency("123:any")) == "afterany:123");
  CHECK(to_string(parse_dependency("7.pbshost:notok")) == "afternotok:7.pbshost");
  CHECK_THROWS_WITH(parse_dependency("123:maybe"), doctest::Contains("--after: '123:maybe' is not JOB[:ok|any|notok]"));
  CHECK_THROWS_WITH(parse_dependency(":ok"), doctest::Contains("is not JOB"));
  std::vector<std::string> seen;
  auto record = [&](const std::vector<std::string>& argv) {
    seen = argv;
    return ProcessResult{0, "9\n", ""};
  };
  const auto& slurm = backend_for(Scheduler::slurm);
  slurm.submit("/j/job.sh", slurm.dependency_options({parse_dependency("5"), parse_dependency("6:any")}), record);
  CHECK(seen == std::vector<std::string>{"sbatch", "--parsable", "--dependency=afterok:5,afterany:6", "/j/job.sh"});
  const auto& pbs = backend_for(Scheduler::pbs);
  pbs.submit("/j/job.sh", pbs.dependency_options({parse_dependency("5.s:notok")}), record);
  CHECK(seen == std::vector<std::string>{"qsub", "-W", "depend=afternotok:5.s", "/j/job.sh"});
  CHECK_THROWS_WITH(backend_for(Scheduler::local).submit("/j/job.sh", {"--dependency=afterok:5"}, record),
                    doctest::Contains("--after: the local site runs each job in the foreground"));
  // A dependency the scheduler refuses is reported in its words.
  auto refuse = [](const std::vector<std::string>&) {
    return ProcessResult{1, "", "sbatch: error: Batch job submission failed: Job dependency problem\n"};
  };
  CHECK_THROWS_WITH(slurm.submit("/j/job.sh", {"--dependency=afterok:999"}, refuse),
                    doctest::Contains("sbatch: refused the job (exit 1): sbatch: error: Batch job submission failed: Job dependency problem"));
}

TEST_SUITE_END();

TEST_SUITE_BEGIN("scheduler_submit");

TEST_CASE("requeueing without bad nodes: Slurm requeues first, then excludes them all (it changes pending jobs only)") {
  std::vector<std::vector<std::string>> seen;
  ProcessResult answer{0, "", ""};
  auto run = [&](const std::vector<std::string>& argv) {
    seen.push_back(argv);
    return answer;
  };
  backend_for(Scheduler::slurm).requeue_excluding("77", {"n2", "n5"}, run);
  REQUIRE(seen.size() == 2);
  CHECK(seen[0] == std::vector<std::string>{"scontrol", "requeue", "77"});
  CHECK(seen[1] == std::vector<std::string>{"scontrol", "update", "JobId=77", "ExcNodeList=n2,n5"});

  seen.clear();
  answer = {1, "", "scontrol: error: Requested operation is presently disabled for job 77\n"};
  std::string e = test::error_of_call([&] { backend_for(Scheduler::slurm).requeue_excluding("77", {"n2"}, run); });
  CHECK(e.find("scontrol requeue 77") != std::string::npos);
  CHECK(e.find("presently disabled") != std::string::npos);
  CHECK(seen.size() == 1);  // no exclusion after a failed requeue

  std::string pbs = test::error_of_call([&] { backend_for(Scheduler::pbs).requeue_excluding("1.pbs", {"n2"}, run); });
  CHECK(pbs.find("cannot be requeued") != std::string::npos);
}

TEST_SUITE_END();

}  // namespace scheduler_submit_test
