#include <doctest/doctest.h>

#include "submit/scheduler.h"
#include "util/error.h"

using namespace hpclaunch;

TEST_SUITE_BEGIN("scheduler");

TEST_CASE("submit commands") {
  CHECK(submit_command(Scheduler::slurm, "/j/job.sh") == std::vector<std::string>{"sbatch", "--parsable", "/j/job.sh"});
  CHECK(submit_command(Scheduler::pbs, "/j/job.sh") == std::vector<std::string>{"qsub", "/j/job.sh"});
}

TEST_CASE("job ids are read from each scheduler's answer") {
  CHECK(parse_submit_answer(Scheduler::slurm, {0, "4242\n", ""}) == "4242");
  CHECK(parse_submit_answer(Scheduler::slurm, {0, "4242;perlmutter\n", ""}) == "4242");
  CHECK(parse_submit_answer(Scheduler::pbs, {0, "0.pbshost\n", ""}) == "0.pbshost");
  CHECK(parse_submit_answer(Scheduler::pbs, {0, "123[].pbs01\n", ""}) == "123[].pbs01");
}

TEST_CASE("a refusal or a garbled answer is an error quoting the scheduler") {
  CHECK_THROWS_WITH(parse_submit_answer(Scheduler::slurm, {1, "", "sbatch: error: Invalid account or account/partition combination specified\n"}),
                    "sbatch: refused the job (exit 1): sbatch: error: Invalid account or account/partition combination specified; fix what the scheduler names; nothing was submitted");
  CHECK_THROWS_WITH(parse_submit_answer(Scheduler::pbs, {2, "", "qsub: Unknown resource: foo\n"}),
                    "qsub: refused the job (exit 2): qsub: Unknown resource: foo; fix what the scheduler names; nothing was submitted");
  CHECK_THROWS_WITH(parse_submit_answer(Scheduler::slurm, {0, "Submitted batch job\n", ""}),
                    "sbatch: answered 'Submitted batch job', which holds no job id; check the scheduler's state with squeue/qstat");
  CHECK_THROWS_WITH(parse_submit_answer(Scheduler::slurm, {127, "", "sbatch: command not found"}),
                    "sbatch: not found on this machine (sbatch: command not found); run hpclaunch on the cluster's login node, or use --dry-run to only render");
  try {
    parse_submit_answer(Scheduler::slurm, {1, "", "x"});
  } catch (const Error& e) {
    CHECK(e.exit_code() == k_exit_failure);
  }
}

TEST_CASE("submit_to_scheduler runs the command it shows") {
  std::vector<std::string> seen;
  auto fake = [&](const std::vector<std::string>& argv) {
    seen = argv;
    return ProcessResult{0, "77\n", ""};
  };
  CHECK(submit_to_scheduler(Scheduler::slurm, "/j/job.sh", fake) == "77");
  CHECK(seen == submit_command(Scheduler::slurm, "/j/job.sh"));
}

TEST_SUITE_END();
