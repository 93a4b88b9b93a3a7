// Following array jobs: the counts of an array's states, each scheduler's names for one task, the JOB_I and
// JOB[I] forms, every task's state in one squeue (answers captured from the test cluster, slurm-wlm 22.05.8), PBS's
// subjob ids (OpenPBS's documented forms; no PBS server runs here), the local runner's tasks, and plot's table.
#include <doctest/doctest.h>

#include <cmath>
#include <unistd.h>

#include <filesystem>
#include <fstream>

#include "jobs/metrics_location.h"
#include "plot/sweep_table.h"
#include "record/job_record.h"
#include "schedulers/local/backend.h"
#include "schedulers/local/backend_job.h"
#include "schedulers/slurm/backend.h"
#include "test_util.h"
#include "util/error.h"

namespace array_jobs_test {  // this file's names, apart from its unity batch's others (tests/CMakeLists.txt)

using namespace hpclaunch;
using hpclaunch::test::squeue_line;
namespace fs = std::filesystem;

namespace {

JobState phase(Phase p) {
  JobState s;
  s.phase = p;
  return s;
}

// An array job directory with `tasks` tasks of values lr=0.1*(i+1), as submit writes it.
struct ArrayDir {
  fs::path dir;
  // `task_ids`: the array's tasks were submitted as jobs of their own (a site without job arrays, Gadi).
  explicit ArrayDir(const std::string& name, int tasks, Scheduler scheduler = Scheduler::slurm, const std::string& id = "1000",
                    const std::vector<std::string>& task_ids = {}) {
    dir = fs::temp_directory_path() / ("hpclaunch-array-test-" + name);
    fs::remove_all(dir);
    fs::create_directories(dir);
    std::ofstream(dir / "plan.json") << nlohmann::json({{"site", "x"}, {"scheduler", scheduler}, {"job_name", "train"},
                                                         {"nodes", 1}, {"command", {"train"}},
                                                         {"array", {{"tasks", tasks}, {"max_concurrent", 2}, {"mode", "product"}, {"keys", {"lr"}}}}});
    std::ofstream(dir / "job.json") << nlohmann::json(
        {{"job_id", id}, {"scheduler", scheduler}, {"site", "x"}, {"nodes", 1}, {"task_job_ids", task_ids}});
    for (int i = 0; i < tasks; ++i) {
      fs::create_directories(dir / "tasks" / std::to_string(i));
      TaskFile f{i, {{"lr", "0." + std::to_string(i + 1)}}, {"train", "--metrics", (dir / "tasks" / std::to_string(i) / "m.jsonl").string()}, {}};
      std::ofstream(dir / "tasks" / std::to_string(i) / "task.json") << nlohmann::json(f).dump();
    }
  }
  ~ArrayDir() { fs::remove_all(dir); }
  JobRecord record() const { return read_job_record(dir.string()); }
};

}  // namespace

TEST_SUITE_BEGIN("array_jobs");

TEST_CASE("an array's state counts its tasks' and says the whole: running, pending, or how it ended") {
  JobState s = summarize_tasks({phase(Phase::completed), phase(Phase::running), phase(Phase::pending), phase(Phase::completed)});
  CHECK(describe(s) == "4 tasks: 1 running, 1 pending, 2 completed");
  CHECK(s.phase == Phase::running);
  CHECK(summarize_tasks({phase(Phase::pending), phase(Phase::pending)}).phase == Phase::pending);
  CHECK(summarize_tasks({phase(Phase::completed), phase(Phase::pending)}).phase == Phase::running);  // under way
  CHECK(summarize_tasks({phase(Phase::completed), phase(Phase::completed)}).succeeded());
  CHECK(summarize_tasks({phase(Phase::completed), phase(Phase::cancelled), phase(Phase::failed)}).phase == Phase::failed);
  CHECK(summarize_tasks({phase(Phase::timeout), phase(Phase::cancelled)}).phase == Phase::timeout);
  CHECK(summarize_tasks({phase(Phase::completed), phase(Phase::cancelled)}).phase == Phase::cancelled);
  JobState forgot = summarize_tasks({phase(Phase::completed), phase(Phase::finished_unknown)});
  CHECK(forgot.phase == Phase::finished_unknown);
  CHECK(describe(forgot) == "2 tasks: 1 completed, 1 finished");
  CHECK(describe(summarize_tasks({phase(Phase::running)})) == "1 task: 1 running");
}

TEST_CASE("a task's id in each scheduler's spelling") {
  CHECK(task_job_id(Scheduler::slurm, "1000", 3) == "1000_3");
  CHECK(task_job_id(Scheduler::pbs, "1000[].pbshost", 3) == "1000[3].pbshost");
  CHECK(task_job_id(Scheduler::pbs, "1000[]", 0) == "1000[0]");
  CHECK(task_job_id(Scheduler::local, "local-1-2", 1) == "local-1-2_1");
}

TEST_CASE("JOB_I and JOB[I] name one task: its directory, id, values and command") {
  ArrayDir a("resolve", 3);
  std::vector<std::string> index = {a.dir.string()};
  JobRecord array = resolve_job("1000", index);
  CHECK(array.is_array());
  CHECK(array.array_tasks == 3);
  JobRecord t = resolve_job("1000_2", index);
  CHECK_FALSE(t.is_array());
  CHECK(t.task == 2);
  CHECK(t.job_id == "1000_2");
  CHECK(t.array_job_id == "1000");
  CHECK(t.dir == (a.dir / "tasks" / "2").string());
  CHECK(t.array_dir == a.dir.string());
  CHECK(task_label(t) == "lr=0.3");
  CHECK(t.command.back() == (a.dir / "tasks" / "2" / "m.jsonl").string());
  CHECK(metrics_path(t, "/elsewhere") == (a.dir / "tasks" / "2" / "m.jsonl").string());
  CHECK(resolve_job("1000[1]", index).task == 1);
  CHECK(resolve_job(a.dir.string() + "_0", index).task == 0);  // a job directory with a task
  CHECK(backend_for(Scheduler::slurm).output_files(t) ==
        std::vector<std::string>{(a.dir / "tasks/2/slurm-1000_2.out").string(), (a.dir / "tasks/2/output.log").string()});
  CHECK_THROWS_WITH(resolve_job("1000_3", index), "1000: has no task 3 (its tasks are 0-2); give a task in that range");
  CHECK_THROWS_WITH(resolve_job("999_1", index), doctest::Contains("999_1: is neither a job directory nor a job id"));
  CHECK_THROWS_WITH(task_record(t, 0), "1000_2: is not an array job; give the job without a task");
  JobRecord plain = array;
  plain.array_tasks = 0;
  CHECK_THROWS_WITH(task_record(plain, 0), "1000: is not an array job; give the job without a task");
}

TEST_CASE("Slurm: one squeue -r gives every task; an unlisted one is asked of sacct, then forgotten, or never started") {
  ArrayDir a("slurm", 4);
  std::ofstream(a.dir / "tasks/0/slurm-1000_0.out") << "done\n";
  std::vector<std::vector<std::string>> calls;
  auto run = [&](const std::vector<std::string>& argv) {
    calls.push_back(argv);
    if (argv[0] == "sacct") return ProcessResult{1, "", "Slurm accounting storage is disabled\n"};
    // task 3 was cancelled while pending, 0 forgotten
    return ProcessResult{0, squeue_line("1000_2", "PENDING", "None", 0) + squeue_line("1000_1", "RUNNING", "None", 0), ""};
  };
  const auto& slurm = backend_for(Scheduler::slurm);
  std::vector<JobState> tasks = slurm.query_tasks(a.record(), run);
  REQUIRE(calls.size() == 2);
  CHECK(calls[0] == squeue_jobs_command({"1000"}));
  CHECK(calls[1] == sacct_jobs_command({"1000"}));
  REQUIRE(tasks.size() == 4);
  CHECK(tasks[0].phase == Phase::finished_unknown);
  CHECK(tasks[1].phase == Phase::running);
  CHECK(tasks[2].phase == Phase::pending);
  CHECK(describe(tasks[3]) == "CANCELLED (before it started)");
  CHECK(describe(slurm.query(a.record(), run)) == "4 tasks: 1 running, 1 pending, 1 cancelled, 1 finished");
  auto forgotten = [](const std::vector<std::string>&) {
    return ProcessResult{1, "", "slurm_load_jobs error: Invalid job id specified\n"};
  };
  CHECK(slurm.query(a.record(), forgotten).phase == Phase::cancelled);  // 0 finished unknown, 1-3 never started
  CHECK(describe(slurm.query(task_record(a.record(), 3), forgotten)) == "CANCELLED (before it started)");
  CHECK(slurm.query(task_record(a.record(), 0), forgotten).phase == Phase::finished_unknown);
  auto dead = [](const std::vector<std::string>&) { return ProcessResult{1, "", "slurm_load_jobs error: Zero Bytes\n"}; };
  CHECK_THROWS_WITH(slurm.query(a.record(), dead), doctest::Contains("squeue -h -r -t all -j 1000 -O JobArrayID:40|,State:24|,Reason:200|,exit_code:12|: failed (exit 1)"));
}

TEST_CASE("PBS: one qstat -x -f -t asks every subjob; Torque, without -x, each; cancel takes the array or one subjob") {
  ArrayDir a("pbs", 2, Scheduler::pbs, "1000[].pbshost");
  std::vector<std::vector<std::string>> calls;
  auto run = [&](const std::vector<std::string>& argv) {
    calls.push_back(argv);
    if (argv[1] == "-x")  // the array, then its subjobs (-t), the second one finished
      return ProcessResult{0, "Job Id: 1000[].pbshost\n    job_state = B\nJob Id: 1000[0].pbshost\n    job_state = R\n"
                              "Job Id: 1000[1].pbshost\n    job_state = F\n    Exit_status = 3\n", ""};
    return ProcessResult{0, "Job Id: " + argv.back() + "\n    job_state = R\n", ""};
  };
  const auto& pbs = backend_for(Scheduler::pbs);
  CHECK(describe(pbs.query(a.record(), run)) == "2 tasks: 1 running, 1 failed");
  REQUIRE(calls.size() == 1);
  CHECK(calls[0] == std::vector<std::string>{"qstat", "-x", "-f", "-t", "1000[].pbshost"});
  auto torque = [&](const std::vector<std::string>& argv) {
    calls.push_back(argv);
    if (argv[1] == "-x") return ProcessResult{2, "", "qstat: invalid option -- 'x'\nusage: qstat [-f] ...\n"};
    return ProcessResult{0, "Job Id: " + argv.back() + "\n    job_state = R\n", ""};
  };
  calls.clear();
  CHECK(describe(pbs.query(a.record(), torque)) == "2 tasks: 2 running");
  REQUIRE(calls.size() == 3);
  CHECK(calls[2] == std::vector<std::string>{"qstat", "-f", "1000[1].pbshost"});
  auto down = [](const std::vector<std::string>&) { return ProcessResult{2, "", "Connection refused\n"}; };
  CHECK_THROWS_WITH(pbs.query(a.record(), down), doctest::Contains("qstat -x -f -t 1000[].pbshost: failed (exit 2)"));
  pbs.cancel(a.record(), run);
  CHECK(calls.back() == std::vector<std::string>{"qdel", "1000[].pbshost"});
  pbs.cancel(task_record(a.record(), 1), run);
  CHECK(calls.back() == std::vector<std::string>{"qdel", "1000[1].pbshost"});
  backend_for(Scheduler::slurm).cancel(task_record(ArrayDir("scancel", 2).record(), 1), run);
  CHECK(calls.back() == std::vector<std::string>{"scancel", "1000_1"});
}

TEST_CASE("local: a task not started waits while the runner works, and never starts once it has gone") {
  ArrayDir a("local", 2, Scheduler::local, "local-1-2");
  const auto& local = backend_for(Scheduler::local);
  write_local_state(a.dir.string(), ::getpid(), -1);  // the runner: this process, alive
  write_local_state((a.dir / "tasks/0").string(), ::getpid(), 0);
  std::vector<JobState> tasks = local.query_tasks(a.record(), nullptr);
  CHECK(tasks[0].phase == Phase::completed);
  CHECK(describe(tasks[1]) == "PENDING (waiting for an earlier task)");
  local.cancel(task_record(a.record(), 1), nullptr);  // not started: recorded as cancelled, the runner skips it
  CHECK(local.query_tasks(a.record(), nullptr)[1].phase == Phase::cancelled);
  fs::remove(a.dir / "tasks/1/state.json");
  write_local_state(a.dir.string(), ::getpid(), 143);  // the runner ended
  CHECK(describe(local.query_tasks(a.record(), nullptr)[1]) == "CANCELLED (never started: the array's runner ended first)");
  CHECK(describe(local.query(a.record(), nullptr)) == "2 tasks: 1 completed, 1 cancelled");
}

TEST_CASE("plot's table: each task's values, best validation loss and its step; the best marked") {
  // Curves as jobs/run_curves.cc reads them: loss per step, val_loss per validation (a NaN one is a gap, never the
  // best).
  auto curves = [](std::vector<Point> loss, std::vector<Point> val) {
    RunCurves m;
    m.curves.push_back({"loss", std::move(loss)});
    if (!val.empty()) m.curves.push_back({"val_loss", std::move(val)});
    return m;
  };
  RunCurves m1 = curves({{1, 0, 0.9}, {20, 0, 0.5}}, {{10, 0, 0.7}, {20, 0, 0.6}});
  RunCurves m2 = curves({{20, 0, 0.4}}, {{10, 0, 0.45}, {15, 0, std::nan("")}, {20, 0, 0.5}});
  RunCurves m3 = curves({{5, 0, 1.0}}, {});
  std::vector<TaskResult> tasks = {{0, {{"lr", "0.1"}}, m1}, {1, {{"lr", "0.2"}}, m2}, {2, {{"lr", "0.3"}}, m3},
                                   {3, {{"lr", "0.4"}}, std::nullopt}};
  CHECK(best_validation_table({"lr"}, tasks) ==
        "TASK  lr   BEST VAL LOSS  AT STEP  LAST LOSS  STEPS\n"
        "0     0.1  0.6            20       0.5        20\n"
        "1     0.2  0.45           10       0.4        20            <- best\n"
        "2     0.3  -              -        1          5\n"
        "3     0.4  -              -        -          (no metrics)\n");
}

TEST_SUITE_END();

TEST_CASE("an array whose tasks are jobs of their own (Gadi): each task's id, asked in one qstat, cancelled together") {
  const std::vector<std::string> ids = {"1001.gadi-pbs", "1002.gadi-pbs", "1003.gadi-pbs"};
  ArrayDir a("per-task", 3, Scheduler::pbs, ids[0], ids);
  std::vector<std::string> index = {a.dir.string()};
  JobRecord array = resolve_job(ids[0], index);  // the first task's id names the array
  REQUIRE(array.is_array());
  CHECK(array.per_task());
  JobRecord t = resolve_job(ids[2], index);  // another task's id names that task
  CHECK(t.task == 2);
  CHECK(t.job_id == ids[2]);
  CHECK(t.listed_id() == ids[2]);
  CHECK(t.dir == (a.dir / "tasks" / "2").string());
  CHECK(task_label(t) == "lr=0.3");
  CHECK(task_record(array, 1).job_id == ids[1]);

  std::vector<std::vector<std::string>> calls;
  auto qstat = [&](const std::vector<std::string>& argv) {
    calls.push_back(argv);
    return ProcessResult{0,
                         "Job Id: 1001.gadi-pbs\n    job_state = F\n    Exit_status = 0\n"
                         "Job Id: 1002.gadi-pbs\n    job_state = R\n",
                         ""};  // the third, waiting on the first, is not listed: forgotten, its directory tells
  };
  const auto& pbs = backend_for(Scheduler::pbs);
  std::vector<JobState> tasks = pbs.query_tasks(array, qstat);
  REQUIRE(calls.size() == 1);
  CHECK(calls[0] == std::vector<std::string>{"qstat", "-x", "-f", "-t", ids[0], ids[1], ids[2]});
  REQUIRE(tasks.size() == 3);
  CHECK(tasks[0].phase == Phase::completed);
  CHECK(tasks[1].phase == Phase::running);
  CHECK(tasks[2].phase == Phase::finished_unknown);
  CHECK(describe(pbs.query(array, qstat)) == "3 tasks: 1 running, 1 completed, 1 finished");
  std::vector<JobAnswer> many = pbs.query_many({array, t}, qstat);
  CHECK(calls.back() == std::vector<std::string>{"qstat", "-x", "-f", "-t", ids[0], ids[1], ids[2]});
  CHECK(describe(*many[0].state) == "3 tasks: 1 running, 1 completed, 1 finished");
  CHECK(many[1].state->phase == Phase::finished_unknown);
  calls.clear();
  pbs.cancel(array, [&](const std::vector<std::string>& argv) {
    calls.push_back(argv);
    return ProcessResult{0, "", ""};
  });
  CHECK(calls == std::vector<std::vector<std::string>>{{"qdel", ids[0], ids[1], ids[2]}});

  // The same array on a Slurm site without arrays: squeue lists each task under its own id.
  ArrayDir s("per-task-slurm", 2, Scheduler::slurm, "2001", {"2001", "2002"});
  calls.clear();
  auto squeue = [&](const std::vector<std::string>& argv) {
    calls.push_back(argv);
    return ProcessResult{0, test::squeue_line("2001", "COMPLETED", "None", 0) + test::squeue_line("2002", "PENDING", "Dependency", 0), ""};
  };
  const auto& slurm = backend_for(Scheduler::slurm);
  CHECK(describe(slurm.query(s.record(), squeue)) == "2 tasks: 1 pending, 1 completed");
  REQUIRE(calls.size() == 1);
  CHECK(calls[0] == squeue_jobs_command({"2001", "2002"}));
  CHECK(describe(slurm.query(task_record(s.record(), 1), squeue)) == "PENDING (Dependency)");
}

}  // namespace array_jobs_test
