// A job's state and cancelling it: state parsing, the state query's fallbacks, cancel. Slurm outputs were captured
// from the real test cluster (slurm-wlm 22.05.8, scripts/test-cluster.sh); PBS outputs follow OpenPBS's documented
// `qstat -f` format (no PBS server can run here, see /work/shared/TEST-CLUSTER.md).
#include <doctest/doctest.h>

#include <filesystem>
#include <fstream>

#include "schedulers/local/backend.h"
#include "schedulers/local/backend_job.h"
#include "schedulers/pbs/backend.h"
#include "schedulers/slurm/backend.h"
#include "test_util.h"
#include "util/error.h"

namespace scheduler_query_test {  // this file's names, apart from its unity batch's others (tests/CMakeLists.txt)

using namespace hpclaunch;
using hpclaunch::test::squeue_line;

namespace {

const char* k_qstat_running = R"(Job Id: 1001.pbshost
    Job_Name = train
    Job_Owner = user1@pbshost
    resources_used.walltime = 00:01:02
    job_state = R
    queue = workq
    server = pbshost
    exec_host = pbshost/0*8
    Variable_List = PBS_O_HOME=/home/user1,PBS_O_LANG=en_US.UTF-8,
	PBS_O_LOGNAME=user1,PBS_O_WORKDIR=/home/user1
    comment = Job run at Sat Nov 21 at 10:45 on (pbshost:ncpus=8)
    run_count = 1
)";

const char* k_qstat_finished = R"(Job Id: 1002.pbshost
    Job_Name = train
    job_state = F
    queue = workq
    Exit_status = 0
    comment = Job run at Sat Nov 21 at 10:45 on (pbshost:ncpus=8) and finished
)";

ProcessResult ok(std::string out) { return {0, std::move(out), ""}; }
ProcessResult unknown_id() { return {1, "", "slurm_load_jobs error: Invalid job id specified\n"}; }

JobRecord slurm_job(const std::string& dir = "/nonexistent/job") {
  JobRecord j;
  j.dir = dir;
  j.submitted = true;
  j.job_id = "1000";
  j.scheduler = Scheduler::slurm;
  return j;
}

// What `status` and `cancel` do: ask the job's own backend.
JobState query_state(const JobRecord& job, const CommandRunner& run) { return backend_for(job.scheduler).query(job, run); }
void cancel_job(const JobRecord& job, const CommandRunner& run) { backend_for(job.scheduler).cancel(job, run); }

}  // namespace

TEST_SUITE_BEGIN("scheduler_query");

TEST_CASE("every Slurm state word maps to a phase, and unknown words to none") {
  CHECK(slurm_phase("PENDING") == Phase::pending);
  CHECK(slurm_phase("RUNNING") == Phase::running);
  CHECK(slurm_phase("COMPLETING") == Phase::running);
  CHECK(slurm_phase("COMPLETED") == Phase::completed);
  CHECK(slurm_phase("CANCELLED by 0") == Phase::cancelled);
  CHECK(slurm_phase("TIMEOUT") == Phase::timeout);
  CHECK(slurm_phase("OUT_OF_MEMORY") == Phase::failed);
  CHECK(slurm_phase("NODE_FAIL") == Phase::failed);
  CHECK(slurm_phase("REQUEUED") == Phase::pending);
  CHECK_FALSE(slurm_phase("Running").has_value());
  CHECK_FALSE(slurm_phase("").has_value());
}

TEST_CASE("qstat -f: job_state letters and Exit_status") {
  auto r = parse_qstat_full(k_qstat_running);
  REQUIRE(r);
  CHECK(r->phase == Phase::running);
  CHECK(r->raw == "R");
  auto f = parse_qstat_full(k_qstat_finished);
  REQUIRE(f);
  CHECK(f->phase == Phase::completed);
  CHECK(f->exit_code == 0);
  std::string killed = std::string(k_qstat_finished);
  killed.replace(killed.find("Exit_status = 0"), 15, "Exit_status = 271");
  CHECK(parse_qstat_full(killed)->phase == Phase::cancelled);
  std::string failed = std::string(k_qstat_finished);
  failed.replace(failed.find("Exit_status = 0"), 15, "Exit_status = 2");
  CHECK(parse_qstat_full(failed)->phase == Phase::failed);
  CHECK(parse_qstat_full("Job Id: 1.s\n    job_state = Q\n")->phase == Phase::pending);
  CHECK_FALSE(parse_qstat_full("qstat: Unknown Job Id 1.s\n").has_value());
}

TEST_CASE("the local runner's state.json: running, exited with a code, cancelled (143), or a runner that died without one") {
  CHECK(parse_local_state(R"({"pid": 12, "state": "running"})", true, "s.json").phase == Phase::running);
  JobState dead = parse_local_state(R"({"pid": 12, "state": "running"})", false, "s.json");
  CHECK(dead.phase == Phase::failed);
  CHECK(describe(dead) == "FAILED (its runner died without recording an exit status)");
  CHECK(parse_local_state(R"({"pid": 12, "state": "exited", "exit_code": 0})", false, "s.json").phase == Phase::completed);
  CHECK(parse_local_state(R"({"pid": 12, "state": "exited", "exit_code": 4})", false, "s.json").phase == Phase::failed);
  JobState cancelled = parse_local_state(R"({"pid": 12, "state": "exited", "exit_code": 143})", false, "s.json");
  CHECK(cancelled.phase == Phase::cancelled);
  CHECK(describe(cancelled) == "CANCELLED (exit 143)");
  CHECK_THROWS_WITH(parse_local_state("{", true, "/j/state.json"),
                    doctest::Contains("/j/state.json: is not a local job state"));
}

TEST_CASE("the local runner runs a script that exited 99 again, up to --max-requeues times, and never a cancelled one") {
  CHECK(after_local_run(99, 0, 3, false) == AfterRun::requeue);
  CHECK(after_local_run(99, 2, 3, false) == AfterRun::requeue);
  CHECK(after_local_run(99, 3, 3, false) == AfterRun::out_of_requeues);
  CHECK(after_local_run(99, 0, 0, false) == AfterRun::finish);  // no --requeue: 99 is an exit code like others
  CHECK(after_local_run(99, 0, 3, true) == AfterRun::finish);   // cancel stopped the runner
  for (int code : {0, 1, 98, 100, 128 + 15}) CHECK(after_local_run(code, 0, 3, false) == AfterRun::finish);
}

TEST_CASE("state.json keeps the runner's pid of a job that requeues, for cancel") {
  LocalStateFile s = parse_local_state_file(R"({"pid": 12, "state": "running", "runner": 7})", "s.json");
  CHECK(s.runner == 7);
  CHECK(parse_local_state_file(R"({"pid": 12, "state": "running"})", "s.json").runner == 0);
  CHECK(nlohmann::json(s).dump() == R"({"pid":12,"runner":7,"state":"running"})");
}

TEST_CASE("unknown job ids are told apart from unreachable schedulers") {
  CHECK(slurm_unknown_job(unknown_id()));
  CHECK(pbs_unknown_job({153, "", "qstat: Unknown Job Id 12.pbshost\n"}));
  CHECK(pbs_unknown_job({35, "", "qstat: 12.pbshost Job has finished, use -x or -H to obtain historical job information\n"}));
  CHECK_FALSE(slurm_unknown_job({1, "", "slurm_load_jobs error: Zero Bytes were transmitted or received\n"}));
  CHECK_FALSE(slurm_unknown_job({127, "", "squeue: command not found"}));
  CHECK_FALSE(pbs_unknown_job(unknown_id()));
}

TEST_CASE("Slurm: one job's state, reason and exit code come from one squeue -O call, as every query's do") {
  std::vector<std::vector<std::string>> calls;
  auto run = [&](const std::vector<std::string>& argv) {
    calls.push_back(argv);
    return ok(squeue_line("1000", "FAILED", "NonZeroExitCode", 768));
  };
  JobState s = query_state(slurm_job(), run);
  CHECK(s.phase == Phase::failed);
  CHECK(s.exit_code == 3);
  CHECK(describe(s) == "FAILED (exit 3)");
  REQUIRE(calls.size() == 1);
  CHECK(calls[0] == squeue_jobs_command({"1000"}));
  CHECK(calls[0] == std::vector<std::string>{"squeue", "-h", "-r", "-t", "all", "-j", "1000", "-O",
                                             "JobArrayID:40|,State:24|,Reason:200|,exit_code:12|"});
  calls.clear();
  CHECK(describe(query_state(slurm_job(), [&](const std::vector<std::string>& argv) {
          calls.push_back(argv);
          return ok(squeue_line("1000", "PENDING", "Resources", 0));
        })) == "PENDING (Resources)");
  CHECK(calls.size() == 1);
}

TEST_CASE("Slurm: a job squeue has forgotten is asked of sacct once, whose answer counts") {
  std::vector<std::vector<std::string>> calls;
  auto run = [&](const std::vector<std::string>& argv) {
    calls.push_back(argv);
    return argv[0] == "squeue" ? unknown_id() : ok("1000|COMPLETED|0:0\n");
  };
  CHECK(query_state(slurm_job(), run).phase == Phase::completed);
  REQUIRE(calls.size() == 2);
  CHECK(calls[1] == sacct_jobs_command({"1000"}));
}

TEST_CASE("Slurm: a job squeue and sacct have forgotten (no accounting) is reported from its job directory") {
  namespace fs = std::filesystem;
  fs::path dir = fs::temp_directory_path() / "hpclaunch-jobs-state-test";
  fs::remove_all(dir);
  fs::create_directories(dir);
  auto run = [](const std::vector<std::string>&) { return unknown_id(); };
  JobState none = query_state(slurm_job(dir.string()), run);
  CHECK(none.phase == Phase::finished_unknown);
  CHECK(describe(none) == "finished (state unknown to scheduler; no output in the job directory)");
  std::ofstream(dir / "slurm-1000.out") << "hello\n";
  JobState with_output = query_state(slurm_job(dir.string()), run);
  CHECK(describe(with_output) == "finished (state unknown to scheduler; its output slurm-1000.out is in the job directory)");
  CHECK_FALSE(with_output.succeeded());
  fs::remove_all(dir);
}

TEST_CASE("Slurm: an unreachable controller is one error naming the command, never a state") {
  auto dead = [](const std::vector<std::string>&) {
    return ProcessResult{1, "", "slurm_load_jobs error: Zero Bytes were transmitted or received\n"};
  };
  CHECK_THROWS_WITH(query_state(slurm_job(), dead),
                    "squeue -h -r -t all -j 1000 -O JobArrayID:40|,State:24|,Reason:200|,exit_code:12|: failed (exit 1): "
                    "slurm_load_jobs error: Zero Bytes were transmitted "
                    "or received; the scheduler cannot be asked: check that slurmctld is up and SLURM_CONF points at it "
                    "(`scontrol ping`)");
  auto missing = [](const std::vector<std::string>& argv) { return ProcessResult{127, "", argv[0] + ": command not found"}; };
  CHECK_THROWS_WITH(query_state(slurm_job(), missing), doctest::Contains("exit_code:12|: not found on this machine"));
}

TEST_CASE("PBS: qstat -f, then qstat -x -f for a finished job") {
  JobRecord j = slurm_job();
  j.scheduler = Scheduler::pbs;
  j.job_id = "1002.pbshost";
  std::vector<std::vector<std::string>> calls;
  auto run = [&](const std::vector<std::string>& argv) {
    calls.push_back(argv);
    if (argv[1] != "-x") return ProcessResult{35, "", "qstat: 1002.pbshost Job has finished, use -x or -H to obtain historical job information\n"};
    return ok(k_qstat_finished);
  };
  CHECK(query_state(j, run).phase == Phase::completed);
  REQUIRE(calls.size() == 2);
  CHECK(calls[1] == std::vector<std::string>{"qstat", "-x", "-f", "1002.pbshost"});
  auto down = [](const std::vector<std::string>&) {
    return ProcessResult{2, "", "Connection refused\nqstat: cannot connect to server pbshost (errno=15010)\n"};
  };
  CHECK_THROWS_WITH(query_state(j, down), doctest::Contains("qstat -f 1002.pbshost: failed (exit 2): Connection refused"));
}

TEST_CASE("cancel runs scancel / qdel and names them when they fail") {
  std::vector<std::string> seen;
  auto run = [&](const std::vector<std::string>& argv) {
    seen = argv;
    return ok("");
  };
  cancel_job(slurm_job(), run);
  CHECK(seen == std::vector<std::string>{"scancel", "1000"});
  auto reset = [](const std::vector<std::string>&) {
    return ProcessResult{104, "", "scancel: error: Kill job error on job id 1000: Connection reset by peer\n"};
  };
  CHECK_THROWS_WITH(cancel_job(slurm_job(), reset), doctest::Contains("scancel 1000: failed (exit 104): scancel: error: Kill job error"));
}

TEST_CASE("a job never accepted or whose directory vanished is an error, not a state") {
  JobRecord j = slurm_job();
  j.submitted = false;
  auto run = [](const std::vector<std::string>&) { return ok("RUNNING\n"); };
  CHECK_THROWS_WITH(query_state(j, run), doctest::Contains("job.json: is missing"));
  j.dir_exists = false;
  CHECK_THROWS_WITH(query_state(j, run), doctest::Contains("the job directory no longer exists"));
}

}  // namespace scheduler_query_test
