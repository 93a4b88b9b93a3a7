// A job directory's records (record/job_record.h): which job a JOB argument names, its excluded nodes; and where
// its metrics file (jobs/metrics_location.h) and output files (each backend's output_files) are.
#include <doctest/doctest.h>

#include <filesystem>
#include <fstream>

#include "jobs/metrics_location.h"
#include "record/job_record.h"
#include "scheduler/backend.h"
#include "util/error.h"
#include "util/strings.h"

namespace job_record_test {  // this file's names, apart from its unity batch's others (tests/CMakeLists.txt)

using namespace hpclaunch;
namespace fs = std::filesystem;

TEST_SUITE_BEGIN("job_record");

TEST_CASE("--metrics is found in the command in both spellings; the last one counts") {
  CHECK(metrics_flag({"hpclaunch-train", "--metrics", "m.jsonl"}) == std::optional<std::string>("m.jsonl"));
  CHECK(metrics_flag({"t", "--metrics=/x/m.jsonl", "--epochs", "2"}) == std::optional<std::string>("/x/m.jsonl"));
  CHECK_FALSE(metrics_flag({"t", "--metrics"}).has_value());
  CHECK_FALSE(metrics_flag({"python", "train.py"}).has_value());
}

TEST_CASE("a job's output files are where its scheduler writes them, then output.log") {
  JobRecord j;
  j.dir = "/j";
  j.job_id = "42";
  j.scheduler = Scheduler::slurm;
  CHECK(backend_for(j.scheduler).output_files(j) == std::vector<std::string>{"/j/slurm-42.out", "/j/output.log"});
  j.scheduler = Scheduler::pbs;
  j.job_id = "7.pbshost";
  j.job_name = "train";
  CHECK(backend_for(j.scheduler).output_files(j) == std::vector<std::string>{"/j/7.pbshost.OU", "/j/train.o7", "/j/output.log"});
}

TEST_CASE("a JOB argument is a job directory or an id in the index; a vanished directory reads as gone; neither is an error") {
  fs::path base = fs::temp_directory_path() / "hpclaunch-jobs-record-test";
  fs::remove_all(base);
  fs::create_directories(base / "hpclaunch-jobs" / "a");
  std::string dir = (base / "hpclaunch-jobs" / "a").string();
  std::ofstream(base / "hpclaunch-jobs" / "a" / "plan.json")
      << R"({"site": "local", "scheduler": "local", "nodes": 2, "job_name": "a", "command": ["hpclaunch-train", "--metrics", "m.jsonl"]})";
  std::ofstream(base / "hpclaunch-jobs" / "a" / "job.json")
      << R"({"job_id": "local-1-2", "scheduler": "local", "site": "local", "submitted_at": "20261121-104500", "nodes": 2})";
  std::vector<std::string> index = {(base / "gone").string(), dir};

  JobRecord by_dir = resolve_job(dir, index);
  CHECK(by_dir.job_id == "local-1-2");
  CHECK(by_dir.nodes == 2);
  CHECK(by_dir.command.size() == 3);
  JobRecord by_id = resolve_job("local-1-2", index);
  CHECK(by_id.dir == dir);
  // The relative --metrics is where the job ran: beside hpclaunch-jobs/.
  CHECK(metrics_path(by_id, "/elsewhere") == (base / "m.jsonl").string());
  JobRecord gone = read_job_record((base / "gone").string());
  CHECK_FALSE(gone.dir_exists);
  CHECK_THROWS_WITH(resolve_job("9999", index), doctest::Contains("9999: is neither a job directory nor a job id"));
  std::ofstream(base / "hpclaunch-jobs" / "a" / "job.json") << "not json";
  CHECK_THROWS_WITH(read_job_record(dir), doctest::Contains("job.json: is not a JSON object"));
  // A number past an int field's range: nlohmann's cast was undefined behaviour (found by fuzz/job_files.cc).
  std::ofstream(base / "hpclaunch-jobs" / "a" / "job.json") << R"({"job_id": "1", "nodes": 1e47})";
  CHECK_THROWS_WITH(read_job_record(dir), doctest::Contains("job.json: has a number out of range"));
  // A scheduler's name this hpclaunch does not know is refused, not read as Slurm (whose scancel cancel would run).
  std::ofstream(base / "hpclaunch-jobs" / "a" / "job.json") << R"({"job_id": "1", "scheduler": "nosuch"})";
  const std::string unknown = "job.json: scheduler: 'nosuch' is not a scheduler this hpclaunch knows (" +
                              join(names_of(scheduler_names()), ", ") + ")";
  CHECK_THROWS_WITH(read_job_record(dir), doctest::Contains(unknown.c_str()));
  std::ofstream(base / "hpclaunch-jobs" / "a" / "job.json") << R"({"job_id": "1", "scheduler": 3})";
  CHECK_THROWS_WITH(read_job_record(dir), doctest::Contains("job.json: scheduler: '3' is not a scheduler"));
  fs::remove_all(base);
}

TEST_SUITE_BEGIN("job_record");

TEST_CASE("a preflight report's bad nodes become excluded nodes with their problems as the reason") {
  std::string report = R"({"ok": false, "bad_nodes": ["n2"], "nodes": [
      {"node": "n1", "problems": []},
      {"node": "n2", "problems": ["3 GPU(s), expected 4", "2.9x slower than the median node"]}]})";
  auto found = bad_nodes_of_preflight(report, "/j/preflight.json", 1);
  REQUIRE(found.size() == 1);
  CHECK(found[0].node == "n2");
  CHECK(found[0].reason == "preflight: 3 GPU(s), expected 4; 2.9x slower than the median node");
  CHECK(found[0].run == 1);
  CHECK(bad_nodes_of_preflight(R"({"ok": true, "bad_nodes": []})", "p", 0).empty());
  CHECK_THROWS_WITH(bad_nodes_of_preflight("oops", "/j/preflight.json", 0),
                    doctest::Contains("/j/preflight.json: is not a preflight report"));
  CHECK_THROWS_WITH(bad_nodes_of_preflight(R"({"bad_nodes": [3]})", "p", 0), doctest::Contains("other than node names"));
}

TEST_CASE("a preflight report's NVLink domains: each node's domain, the groups inside and across, the shortfalls") {
  // As hpclaunch-probe writes it (trainer/probe_report.cc's probe_json; t0272 makes a real one).
  const PreflightReport r = parse_preflight(R"({"ok": true, "bad_nodes": [], "expected_nvlink_busbw_gbs": 700,
      "nodes": [{"node": "n1", "domain": "U/1", "ranks": [0, 1]}, {"node": "n2", "domain": "U/2", "ranks": [2, 3]}],
      "nvlink_domains": [{"name": "U/1", "nodes": ["n1"], "ranks": [0, 1], "bytes": 64, "busbw_gbs": 610.5},
                         {"name": "U/2", "nodes": ["n2"], "ranks": [2, 3], "bytes": 64, "busbw_gbs": 120.25}],
      "across_domains": [{"name": "rail 0", "nodes": ["n1", "n2"], "ranks": [0, 2], "bytes": 64, "busbw_gbs": 40}],
      "domain_shortfalls": ["NVLink domain U/2 (n2): busbw 120.25 GB/s inside it, below half the 700 GB/s it gives"]})",
                                            "/j/preflight.json");
  CHECK(r.nodes[1].domain == "U/2");
  REQUIRE(r.nvlink_domains.size() == 2);
  CHECK(r.nvlink_domains[1].busbw_gbs == doctest::Approx(120.25));
  CHECK(r.across_domains[0].ranks == std::vector<int>{0, 2});
  CHECK(r.expected_nvlink_busbw_gbs == doctest::Approx(700));
  CHECK(r.domain_shortfalls.size() == 1);
  // An older report (no domains) still reads.
  CHECK(parse_preflight(R"({"ok": true, "bad_nodes": []})", "p").nvlink_domains.empty());
}

TEST_CASE("excluded nodes accumulate over runs; a node keeps its first reason; the file round-trips") {
  std::vector<ExcludedNode> known = {{"n2", "preflight: slow", 0}};
  auto merged = merge_excluded(known, {{"n2", "preflight: 3 GPU(s)", 1}, {"n7", "named by hand", 1}});
  REQUIRE(merged.size() == 2);
  CHECK(merged[0].reason == "preflight: slow");
  CHECK(merged[1].node == "n7");

  fs::path dir = fs::temp_directory_path() / "hpclaunch-excluded-test";
  fs::remove_all(dir);
  fs::create_directories(dir);
  CHECK(read_excluded_nodes(dir.string()).nodes.empty());
  write_excluded_nodes(dir.string(), {merged});
  auto back = read_excluded_nodes(dir.string()).nodes;
  REQUIRE(back.size() == 2);
  CHECK(back[1].node == "n7");
  CHECK(back[1].run == 1);
  CHECK(read_job_record(dir.string()).excluded.size() == 2);  // `status` shows them
  std::ofstream(dir / "excluded-nodes.json") << "[";
  CHECK_THROWS_WITH(read_excluded_nodes(dir.string()), doctest::Contains("excluded-nodes.json: is not a JSON object"));
  fs::remove_all(dir);
}

TEST_CASE("the agents' words: failure.json's summary, each hang in attempt order, the spares and their places") {
  fs::path dir = fs::temp_directory_path() / "hpclaunch-record-agent-words";
  fs::remove_all(dir);
  fs::create_directories(dir / "stacks" / "attempt_10");
  fs::create_directories(dir / "stacks" / "attempt_2");
  std::ofstream(dir / "failure.json") << R"({"summary": "rank 1 on n2 exited with code 1"})";
  std::ofstream(dir / "stacks" / "attempt_10" / "hang-n1.json") << R"({"summary": "late"})";
  std::ofstream(dir / "stacks" / "attempt_2" / "hang-n2.json") << R"({"summary": "early"})";
  std::ofstream(dir / "stacks" / "attempt_2" / "rank_1.txt") << "not a hang file";
  std::ofstream(dir / "nodes.json") << R"J({"spares": 2, "standby": ["n5 (node 4)", 7],
    "replaced": ["round 1: n4 (node 3) took the place of n2 (node 1) as group rank 1: its agent was lost"]})J";
  JobRecord r = read_job_record(dir.string());
  CHECK(r.failure == "rank 1 on n2 exited with code 1");
  CHECK(r.hangs == std::vector<std::string>{"attempt 2: early", "attempt 10: late"});
  CHECK(r.spares == std::vector<std::string>{"n5 (node 4)"});  // what is not a string is skipped
  CHECK(r.replaced == std::vector<std::string>{
                          "round 1: n4 (node 3) took the place of n2 (node 1) as group rank 1: its agent was lost"});
  std::ofstream(dir / "nodes.json") << "{half-writ";
  CHECK(read_job_record(dir.string()).spares.empty());
  fs::remove_all(dir);
}

TEST_SUITE_END();

}  // namespace job_record_test
