// The load `jobs` puts on a scheduler: query_many asks once for every job in view — Slurm one squeue (and one
// sacct for what squeue has forgotten), PBS one qstat — whatever the number of jobs and tasks. The Slurm answers
// are in the form the test cluster's squeue 22.05.8 wrote them (`-O` fields padded and ended by '|'; the exit
// code as a wait status) and sacct's documented -P form (the shared test clusters have no accounting: their sacct
// answers "Slurm accounting storage is disabled", exit 1); the usage answers of
// tests/unit/data/slurm-22.05/sacct-usage* are real, from a cluster with slurmdbd (TEST_CLUSTER_ACCOUNTING=1, as
// t0642 starts it); PBS follows OpenPBS's documented `qstat -f` form.
#include <doctest/doctest.h>

#include <filesystem>

#include "jobs/watch.h"
#include "schedulers/pbs/backend.h"
#include "schedulers/slurm/backend.h"
#include "test_util.h"
#include "util/error.h"
#include "util/file.h"

namespace scheduler_load_test {  // this file's names, apart from its unity batch's others (tests/CMakeLists.txt)

using namespace hpclaunch;
using hpclaunch::test::squeue_line;

namespace {

JobRecord job(const std::string& id, Scheduler s = Scheduler::slurm, int tasks = 0) {
  JobRecord r;
  r.dir = "/nonexistent/hpclaunch-load-test/" + id;
  r.submitted = true;
  r.job_id = id;
  r.scheduler = s;
  r.array_tasks = tasks;
  return r;
}

struct Recorder {
  std::vector<std::vector<std::string>> calls;
  std::function<ProcessResult(const std::vector<std::string>&)> answer;
  CommandRunner runner() {
    return [this](const std::vector<std::string>& argv) {
      calls.push_back(argv);
      return answer(argv);
    };
  }
};

std::string data(const char* name) {
  auto text = read_file((std::filesystem::path(HPCLAUNCH_SOURCE_DIR) / "tests/unit/data" / name).string());
  REQUIRE(text);
  return *text;
}

}  // namespace

TEST_SUITE_BEGIN("scheduler_load");

TEST_CASE("squeue -O and sacct answers: state, reason, exit code by id") {
  auto jobs = parse_squeue_jobs(squeue_line("1000", "FAILED", "NonZeroExitCode", 768) +
                                squeue_line("1001_0", "RUNNING", "None", 0) + squeue_line("1002", "PENDING", "Resources", 0) +
                                squeue_line("1003", "CANCELLED", "None", 15) + "garbage\n");
  REQUIRE(jobs.size() == 4);
  CHECK(describe(jobs.at("1000")) == "FAILED (exit 3)");  // as scontrol's ExitCode=3:0 says it
  CHECK(describe(jobs.at("1001_0")) == "RUNNING");
  CHECK(describe(jobs.at("1002")) == "PENDING (Resources)");
  CHECK(describe(jobs.at("1003")) == "CANCELLED");  // killed by signal 15: exit code 0, as scontrol's 0:15
  auto acct = parse_sacct_jobs("1000|COMPLETED|0:0\n1001_1|CANCELLED by 0|0:15\n1005|FAILED|2:0\n|x|\n");
  REQUIRE(acct.size() == 3);
  CHECK(describe(acct.at("1001_1")) == "CANCELLED");
  CHECK(describe(acct.at("1005")) == "FAILED (exit 2)");
}

TEST_CASE("sacct's usage answer: the allocation's elapsed time, the largest step RSS, energy, steps, by job") {
  // sacct -n -P -j 1000,1001_3,1002 -o JobID,Elapsed,MaxRSS,ConsumedEnergyRaw,State, as Slurm documents -P
  // (the test cluster has no accounting to record one).
  const auto u = parse_sacct_usage("1000|00:01:05|||COMPLETED\n"
                                   "1000.batch|00:01:05|5120K|0|COMPLETED\n"
                                   "1000.extern|00:01:05|1024K|0|COMPLETED\n"
                                   "1000.0|00:00:40|2.50G|0|COMPLETED\n"
                                   "1001_3|1-02:00:00|||FAILED\n"
                                   "1001_3.batch|1-02:00:00|900M|1500|FAILED\n"
                                   "1001_3.0|1-01:59:00|300M|2500|FAILED\n"
                                   "1002|00:00:00|||PENDING\n"
                                   "garbage\n|x|y|z|w\n");
  REQUIRE(u.size() == 3);
  using Items = std::vector<std::pair<std::string, std::string>>;
  CHECK(u.at("1000").items == Items{{"elapsed", "00:01:05"}, {"max RSS", "2.5 GiB (step 0)"}, {"steps", "3"}});
  CHECK(u.at("1000").note.empty());
  CHECK(u.at("1001_3").items ==
        Items{{"elapsed", "1-02:00:00"}, {"max RSS", "900.0 MiB (step batch)"}, {"energy", "4000 J"}, {"steps", "2"}});
  CHECK(u.at("1002").items.empty());
  CHECK(u.at("1002").note == "not started yet (sacct: PENDING)");
  CHECK(*sacct_size("512") == 512);
  CHECK(*sacct_size("3K") == 3072);
  CHECK_FALSE(sacct_size("").has_value());
  CHECK_FALSE(sacct_size("12Q").has_value());
  CHECK_FALSE(sacct_size("-1K").has_value());
}

TEST_CASE("real sacct 22.05.8 with slurmdbd: steps batch, extern and N; MaxRSS in K; energy 0; jobs not started or running") {
  // slurm-22.05/commands.tsv: sacct-usage (jobs 2011 of two srun steps, 2012 failed, array tasks 2013_0 and 2013_1,
  // 2015 running, 2016 pending, 2017 cancelled while pending), sacct-usage-running (2018: its step 0 ended, the
  // batch step still running) and sacct-usage-no-gather. JobAcctGatherType=jobacct_gather/linux (but in the last),
  // PrologFlags=Contain, no energy plugin.
  using Items = std::vector<std::pair<std::string, std::string>>;
  const auto u = parse_sacct_usage(data("slurm-22.05/sacct-usage.txt"));
  REQUIRE(u.size() == 7);
  CHECK(u.at("2011").items == Items{{"elapsed", "00:00:11"}, {"max RSS", "133.1 MiB (step 0)"}, {"steps", "4"}});  // 136340K
  CHECK(u.at("2011").note.empty());
  CHECK(u.at("2012").items == Items{{"elapsed", "00:00:04"}, {"max RSS", "24.5 MiB (step batch)"}, {"steps", "2"}});
  CHECK(u.at("2013_1").items == Items{{"elapsed", "00:00:04"}, {"max RSS", "39.6 MiB (step batch)"}, {"steps", "2"}});
  // Running: its steps' MaxRSS is empty until they end, which is no JobAcctGatherType's fault.
  CHECK(u.at("2015").items == Items{{"elapsed", "00:00:06"}, {"steps", "3"}});
  CHECK(u.at("2015").note == "step(s) still running: sacct records a step's MaxRSS when it ends (sstat shows a running step's)");
  // Not started: no elapsed time of 00:00:00, no steps, and why.
  CHECK(u.at("2016").items.empty());
  CHECK(u.at("2016").note == "not started yet (sacct: PENDING)");
  CHECK(u.at("2017").items.empty());
  CHECK(u.at("2017").note == "never started (sacct: CANCELLED by 0, no steps)");

  const auto r = parse_sacct_usage(data("slurm-22.05/sacct-usage-running.txt"));
  REQUIRE(r.size() == 1);
  CHECK(r.at("2018").items == Items{{"elapsed", "00:00:07"}, {"max RSS", "63.2 MiB (step 0)"}, {"steps", "3"}});  // 64668K
  CHECK(r.at("2018").note ==
        "2 step(s) still running: sacct records a step's MaxRSS when it ends (sstat shows a running step's)");

  // sacct-usage-no-gather: the same cluster with JobAcctGatherType=jobacct_gather/none: every MaxRSS empty.
  const auto n = parse_sacct_usage(data("slurm-22.05/sacct-usage-no-gather.txt"));
  REQUIRE(n.size() == 1);
  CHECK(n.at("2010").items == Items{{"elapsed", "00:00:06"}, {"steps", "3"}});
  CHECK(n.at("2010").note == "sacct records no memory use (its steps' MaxRSS: JobAcctGatherType)");
}

TEST_CASE("usage: Slurm asks one sacct for all jobs and quotes it when accounting is off; other schedulers record none") {
  Recorder r;
  bool accounting = true;
  r.answer = [&](const std::vector<std::string>&) {
    if (!accounting) return ProcessResult{1, "", "Slurm accounting storage is disabled\n"};  // the test cluster's
    return ProcessResult{0, "2000|00:00:07|||COMPLETED\n2000.batch|00:00:07|3000K|0|COMPLETED\n", ""};
  };
  const std::vector<JobRecord> jobs = {job("2000"), job("2001_4")};
  const auto& slurm = backend_for(Scheduler::slurm);
  std::vector<JobUsage> u = slurm.usage(jobs, r.runner());
  REQUIRE(r.calls.size() == 1);
  CHECK(r.calls[0] == sacct_usage_command({"2000", "2001_4"}));
  CHECK(r.calls[0][4] == "2000,2001_4");
  REQUIRE(u.size() == 2);
  CHECK(u[0].items.front() == std::pair<std::string, std::string>{"elapsed", "00:00:07"});
  CHECK(u[1].items.empty());
  CHECK(u[1].note == "not recorded (sacct: no record of job 2001_4)");
  accounting = false;
  u = slurm.usage(jobs, r.runner());
  CHECK(u[0].items.empty());
  CHECK(u[0].note == "not recorded (sacct: Slurm accounting storage is disabled)");
  const std::vector<JobUsage> pbs = backend_for(Scheduler::pbs).usage({job("7.pbs", Scheduler::pbs)}, r.runner());
  REQUIRE(pbs.size() == 1);
  CHECK(pbs[0].items.empty());
  CHECK(pbs[0].note.find("not recorded: hpclaunch asks pbs only") == 0);
  CHECK(r.calls.size() == 2);  // PBS asked nothing
}

TEST_CASE("Slurm: 50 jobs and an array in one squeue; the forgotten ones in one sacct, or from their directories") {
  std::vector<JobRecord> jobs;
  std::string listed;
  for (int i = 0; i < 50; ++i) {
    jobs.push_back(job(std::to_string(2000 + i)));
    if (i != 7) listed += squeue_line(std::to_string(2000 + i), i % 2 ? "RUNNING" : "COMPLETED", "None", 0);
  }
  jobs.push_back(job("3000", Scheduler::slurm, 3));  // an array: task 2 forgotten
  listed += squeue_line("3000_0", "RUNNING", "None", 0) + squeue_line("3000_1", "PENDING", "JobArrayTaskLimit", 0);
  JobRecord task = task_record(jobs.back(), 1);
  jobs.push_back(task);

  Recorder r;
  bool accounting = true;
  r.answer = [&](const std::vector<std::string>& argv) {
    if (argv[0] == "squeue") return ProcessResult{0, listed, ""};
    if (!accounting) return ProcessResult{1, "Slurm accounting storage is disabled\n", ""};
    return ProcessResult{0, "2007|TIMEOUT|0:15\n3000_2|COMPLETED|0:0\n", ""};
  };
  const auto& slurm = backend_for(Scheduler::slurm);
  std::vector<JobAnswer> answers = slurm.query_many(jobs, r.runner());
  REQUIRE(r.calls.size() == 2);
  CHECK(r.calls[0][0] == "squeue");
  CHECK(r.calls[0][6].rfind("2000,2001,", 0) == 0);
  CHECK(r.calls[0][6].find(",3000") != std::string::npos);
  CHECK(r.calls[0][6].find("3000,3000") == std::string::npos);  // the task's array asked once
  CHECK(r.calls[1] == std::vector<std::string>{"sacct", "-n", "-P", "-X", "-j", "2007,3000", "-o", "JobID,State,ExitCode"});
  REQUIRE(answers.size() == 52);
  CHECK(describe(*answers[0].state) == "COMPLETED");
  CHECK(describe(*answers[1].state) == "RUNNING");
  CHECK(answers[7].state->phase == Phase::timeout);
  CHECK(describe(*answers[50].state) == "3 tasks: 1 running, 1 pending, 1 completed");
  CHECK(describe(*answers[51].state) == "PENDING (JobArrayTaskLimit)");

  accounting = false;  // no sacct answer: the job directory says what it can (here: nothing)
  r.calls.clear();
  answers = slurm.query_many(jobs, r.runner());
  CHECK(r.calls.size() == 2);
  CHECK(describe(*answers[7].state) == "finished (state unknown to scheduler; no output in the job directory)");
  CHECK(describe(*answers[50].state) == "3 tasks: 1 running, 1 pending, 1 cancelled");  // task 2 never started

  r.calls.clear();  // all listed: squeue alone
  listed += squeue_line("2007", "RUNNING", "None", 0) + squeue_line("3000_2", "RUNNING", "None", 0);
  slurm.query_many(jobs, r.runner());
  CHECK(r.calls.size() == 1);

  r.answer = [](const std::vector<std::string>&) { return ProcessResult{1, "", "slurm_load_jobs error: Unable to contact slurm controller\n"}; };
  CHECK_THROWS_WITH(slurm.query_many(jobs, r.runner()), doctest::Contains("squeue -h -r -t all -j 2000,"));

  JobRecord gone = job("4000");
  gone.dir_exists = false;
  r.answer = [](const std::vector<std::string>&) { return ProcessResult{0, "", ""}; };
  answers = slurm.query_many({gone}, r.runner());
  CHECK(answers[0].error.find("the job directory no longer exists") != std::string::npos);
}

TEST_CASE("PBS: every job and subjob in one qstat -x -f -t; ids it does not know are forgotten") {
  std::vector<JobRecord> jobs = {job("10.pbshost", Scheduler::pbs), job("11.pbshost", Scheduler::pbs),
                                 job("12[].pbshost", Scheduler::pbs, 2)};
  Recorder r;
  r.answer = [](const std::vector<std::string>&) {
    return ProcessResult{153,
                         "Job Id: 10.pbshost\n    job_state = R\nJob Id: 12[].pbshost\n    job_state = B\n"
                         "Job Id: 12[0].pbshost\n    job_state = F\n    Exit_status = 0\nJob Id: 12[1].pbshost\n"
                         "    job_state = Q\n",
                         "qstat: Unknown Job Id 11.pbshost\n"};
  };
  std::vector<JobAnswer> answers = backend_for(Scheduler::pbs).query_many(jobs, r.runner());
  REQUIRE(r.calls.size() == 1);
  CHECK(r.calls[0] == std::vector<std::string>{"qstat", "-x", "-f", "-t", "10.pbshost", "11.pbshost", "12[].pbshost"});
  CHECK(answers[0].state->phase == Phase::running);
  CHECK(answers[1].state->phase == Phase::finished_unknown);
  CHECK(describe(*answers[2].state) == "2 tasks: 1 pending, 1 completed");
}

TEST_CASE("wait and logs --follow ask less often while nothing changes, and at once again after a change") {
  PollBackoff b(0.5);
  CHECK(b.next(true) == 0.5);
  CHECK(b.next(false) == 1.0);
  CHECK(b.next(false) == 2.0);
  CHECK(b.next(false) == 2.0);  // at most 4 intervals
  CHECK(b.next(true) == 0.5);
  CHECK(b.next(false) == 1.0);
}

TEST_CASE("wait and logs --follow ask a scheduler every 2 s by default, the local site's own state file sooner") {
  CHECK(backend_for(Scheduler::slurm).poll_interval() == 2.0);
  CHECK(backend_for(Scheduler::pbs).poll_interval() == 2.0);
  // A local job's end is seen within a second even after PollBackoff has stretched the pace 4 times.
  CHECK(backend_for(Scheduler::local).poll_interval() * PollBackoff::k_factor <= 1.0);
}

TEST_SUITE_END();

}  // namespace scheduler_load_test
