// `hpclaunch report`'s pure part (report/report.h): the timeline from runs and the agents' words, each rank's lines,
// the thinned curves, the page (sections, escaping, nothing fetched) and its JSON (cli/json_output.h).
#include <doctest/doctest.h>

#include <cmath>
#include <sstream>
#include <nlohmann/json.hpp>

#include "cli/json_output.h"
#include "report/report.h"

namespace report_test {  // this file's names, apart from its unity batch's others (tests/CMakeLists.txt)

using namespace hpclaunch;

namespace {

JobState state_of(Phase phase, std::optional<int> exit_code = std::nullopt) {
  return JobState{phase, "", "", exit_code, false};
}

size_t count(const std::string& text, const std::string& what) {
  size_t n = 0;
  for (size_t at = text.find(what); at != std::string::npos; at = text.find(what, at + 1)) ++n;
  return n;
}

// A finished job with a requeue, a killed run, a hang and a spare: every section filled.
ReportFacts facts() {
  ReportFacts f;
  f.job_id = "1234";
  f.job_dir = "/scratch/hpclaunch-jobs/train-1";
  f.site = "perlmutter";
  f.scheduler = "slurm";
  f.state = state_of(Phase::failed, 1);
  PlanFile plan;
  plan.nodes = 2;
  plan.ntasks = 2;
  plan.world_size = 8;
  plan.account = "m1_g";
  plan.partition = "regular";
  plan.time = "01:00:00";
  plan.command = {"python", "train.py", "--name", "<b>x</b>"};
  f.plan = plan;
  f.script = "#!/bin/bash\necho \"<script>alert('x')</script>\" && true\n";
  std::string metrics;
  for (int s = 1; s <= 50; ++s) {
    metrics += "{\"type\":\"step\",\"step\":" + std::to_string(s) + ",\"loss\":" + std::to_string(3.0 / s) +
               ",\"lr\":0.1,\"samples_per_s\":100,\"step_time_s\":0.1}\n";
    if (s % 10 == 0) metrics += "{\"type\":\"validation\",\"step\":" + std::to_string(s) + ",\"val_loss\":" + std::to_string(3.5 / s) + "}\n";
  }
  f.metrics_file = "/m.jsonl";
  f.curves = parse_run_curves(metrics, "/m.jsonl");
  f.output_file = "/o.log";
  f.ranks = {{0, {"[n1:0] step 50 <ok>"}, "exited with code 1"}};
  f.timeline = {{1.5, 0, "run", "run 0 started", ""}, {std::nullopt, std::nullopt, "hang", "rank 3 hung", "</pre><i>x"}};
  f.usage = {{"state", "FAILED (exit 1)"}};
  f.usage_note = "not recorded: accounting";
  return f;
}

}  // namespace

TEST_SUITE_BEGIN("report");

TEST_CASE("html_escape turns the five special characters into entities") {
  CHECK(html_escape("<a href=\"x\">'b' & c</a>") == "&lt;a href=&quot;x&quot;&gt;&#39;b&#39; &amp; c&lt;/a&gt;");
  CHECK(html_escape("plain") == "plain");
}

TEST_CASE("a requeue, a killed run and the failure's hang are on one timeline, each with its cause") {
  std::vector<RunSpan> runs = {{0, 0, 40, 100, "stopped", 99, 8}, {40, 160, 55, 200, "", 0, 8}, {40, 230, 80, 400, "", 0, 8}};
  Failure hang;
  hang.host = "n2";
  hang.rank = 3;
  hang.exit_code = 1;
  hang.hang_s = 300;
  hang.frame = "train.py:57 `next(loader)`";
  hang.stacks = "/j/stacks/attempt_2";
  std::vector<ExcludedNode> excluded = {{"n9", "preflight: 3 GPU(s)", 1}};
  auto t = make_timeline(runs, {"attempt 1: rank 3 on n2 made no progress"}, {"n4 took n2's place"}, excluded, hang,
                         state_of(Phase::failed, 1));
  std::vector<std::string> kinds;
  for (const auto& ev : t) kinds.push_back(ev.kind);
  CHECK(kinds == std::vector<std::string>{"run", "requeue", "run", "restart", "run", "end", "excluded", "hang", "spare",
                                          "hang"});
  CHECK(t[1].what.find("stopped by a signal at step 40 (exit 99)") != std::string::npos);
  CHECK(t[1].wall_s == doctest::Approx(100));
  CHECK(t[2].what == "run 1 resumed from step 40 (8 workers)");
  CHECK(t[3].what.find("killed, and restarted") != std::string::npos);
  CHECK(t.back().what.find("root cause: rank 3") != std::string::npos);
  CHECK(t.back().detail.find("train.py:57") != std::string::npos);
  CHECK(t.back().detail.find("/j/stacks/attempt_2") != std::string::npos);
  CHECK(t[6].what == "n9 left out from run 1: preflight: 3 GPU(s)");
}

TEST_CASE("a job still running has its last run running, not ended") {
  auto t = make_timeline({{0, 0, 12, 30, "", 0, 1}}, {}, {}, {}, std::nullopt, state_of(Phase::running));
  REQUIRE(t.size() == 1);
  CHECK(t[0].kind == "run");
  auto lost = Failure{};
  lost.host = "n3";
  lost.node_lost = true;
  lost.reason = "the agent on n3 was lost";
  auto ended = make_timeline({{0, 0, 12, 30, "", 0, 1}}, {}, {}, {}, lost, state_of(Phase::failed, 1));
  CHECK(ended[1].what.find("(killed)") != std::string::npos);
  CHECK(ended.back().kind == "lost node");
  const JobState completed{Phase::completed, "COMPLETED", "", 0, false};
  CHECK(make_timeline({}, {}, {}, {}, std::nullopt, completed).back().what == "the job ended: COMPLETED");
}

TEST_CASE("each rank keeps its last lines; the failure's rank its exit, the others 'not recorded'") {
  std::string out = "script line\n[n1:0] a\n[n1:1] b\n[n1:0] c\n[n1:0] d\n1: srun says\n";
  Failure f;
  f.rank = 1;
  f.signal = 9;
  auto ranks = rank_facts(out, 2, f, state_of(Phase::failed));
  REQUIRE(ranks.size() == 2);
  CHECK(ranks[0].last_lines == std::vector<std::string>{"[n1:0] c", "[n1:0] d"});
  CHECK(ranks[0].exit == "not recorded");
  CHECK(ranks[1].last_lines == std::vector<std::string>{"[n1:1] b", "1: srun says"});
  CHECK(ranks[1].exit == "killed by SIGKILL");
  auto done = rank_facts("[n1:0] a\n", 5, std::nullopt, state_of(Phase::completed, 0));
  CHECK(done[0].exit == "exited 0 (the job completed)");
}

TEST_CASE("ranks beyond the blamed one: their exits as the agents logged them; their rows even without lines") {
  const std::string out =
      "[n1:0] a\n"
      "hpclaunch agent[n2]: worker failed: rank 3 (local rank 1) on n2 exited with code 7; stopping this node's workers\n"
      "hpclaunch agent[n1]: worker failed: rank 0 (local rank 0) on n1 was killed by SIGSEGV; stopping this node's workers\n"
      "hpclaunch agent[n3]: worker rank 4 (local rank 0) on n3 exited with code 99 (saved, requeue me); stopping the job\n"
      "[n2:2] worker failed: rank 2 (local rank 0) on n2 exited with code 5\n";  // a worker's own line: not the agent's
  Failure f;
  f.rank = 3;
  f.exit_code = 7;
  auto ranks = rank_facts(out, 8, f, state_of(Phase::failed));
  REQUIRE(ranks.size() == 4);
  CHECK(ranks[0].exit == "killed by SIGSEGV (the agent's log)");
  CHECK(ranks[1].rank == 2);
  CHECK(ranks[1].exit == "not recorded");
  CHECK(ranks[2].rank == 3);
  CHECK(ranks[2].exit == "exited with code 7");  // failure.json's
  CHECK(ranks[3].rank == 4);
  CHECK(ranks[3].exit == "exited with code 99 (the agent's log)");
  CHECK(ranks[3].last_lines.empty());
  CHECK(rank_facts(out, 8, std::nullopt, state_of(Phase::completed, 0))[0].exit == "exited 0 (the job completed)");
}

TEST_CASE("thin_series keeps each column's lowest and highest value, in order, and the gaps") {
  Series s;
  for (int i = 0; i < 100000; ++i) {
    s.x.push_back(i);
    s.y.push_back(i == 5000 ? NAN : std::sin(i * 0.01) + (i == 77777 ? 20 : 0));
  }
  Series t = thin_series(s, 0, 99999, 640);
  CHECK(t.x.size() <= 2 * 640 + 2);
  CHECK(t.x.size() > 640);
  CHECK(std::is_sorted(t.x.begin(), t.x.end()));
  CHECK(std::count_if(t.y.begin(), t.y.end(), [](double v) { return std::isnan(v); }) == 1);
  CHECK(*std::max_element(t.y.begin(), t.y.end(), [](double a, double b) { return !(b != b) && (a != a || a < b); }) >
        15);  // the spike of one point among 156 a column is kept
  Series few;
  few.x = {1, 2};
  few.y = {3, 4};
  CHECK(thin_series(few, 1, 2, 640).x.size() == 2);
}

// A chart's path ("M72.0 30.5 L73.1 31.0 ..."): how many points, and the highest drawn.
struct PathPoints {
  size_t points = 0;
  double top_y = 1e9, bottom_y = -1e9;  // the point drawn highest (the smallest y) and lowest
};

PathPoints path_points(const std::string& page, const std::string& label) {
  const std::string head = "data-label=\"" + label + "\" d=\"";
  const size_t at = page.find(head);
  REQUIRE(at != std::string::npos);
  const size_t end = page.find('"', at + head.size());
  std::istringstream d(page.substr(at + head.size(), end - at - head.size()));
  PathPoints p;
  std::string pen_x;
  double y = 0;
  while (d >> pen_x >> y) ++p.points, p.top_y = std::min(p.top_y, y), p.bottom_y = std::max(p.bottom_y, y);
  return p;
}

TEST_CASE("a curve of 100,000 steps is drawn with at most two points a pixel column, and its one-step spike kept") {
  ReportFacts f = facts();
  std::string metrics;
  for (int s = 1; s <= 100000; ++s)
    metrics += "{\"type\":\"step\",\"step\":" + std::to_string(s) + ",\"loss\":" + (s == 77777 ? "40" : "1.5") +
               ",\"lr\":0.1,\"samples_per_s\":100,\"step_time_s\":0.1}\n" +
               (s % 10000 ? "" : "{\"type\":\"validation\",\"step\":" + std::to_string(s) + ",\"val_loss\":1.6}\n");
  f.curves = parse_run_curves(metrics, "/m.jsonl");
  const std::string page = report_html(f);
  const PathPoints raw = path_points(page, "run: training");  // the raw loss, faint under its smoothed line
  CHECK(raw.points <= 2 * k_report_curve_columns + 2);
  CHECK(raw.points >= k_report_curve_columns / 2);
  CHECK(raw.top_y < 60);                    // the spike, near the top of the plot area (y 26 to 210)
  CHECK(raw.bottom_y - raw.top_y > 100);  // far above the line
  CHECK(page.size() < 200000);  // three charts of about 1,280 points, not 100,000
}

TEST_CASE("the page has every section, escapes every string from files and fetches nothing") {
  const std::string page = report_html(facts());
  for (const char* id : {"request", "timeline", "ranks", "curves", "preflight", "usage", "script"})
    CHECK_MESSAGE(page.find(std::string("<section id=\"") + id + "\">") != std::string::npos, id);
  CHECK(page.find("<script") == std::string::npos);
  CHECK(page.find("&lt;script&gt;alert(&#39;x&#39;)&lt;/script&gt;") != std::string::npos);
  CHECK(page.find("&lt;b&gt;x&lt;/b&gt;") != std::string::npos);
  CHECK(page.find("[n1:0] step 50 &lt;ok&gt;") != std::string::npos);
  CHECK(page.find("&lt;/pre&gt;&lt;i&gt;x") != std::string::npos);
  CHECK(page.find("<i>x") == std::string::npos);
  // The only address is SVG's namespace; nothing is loaded from anywhere.
  CHECK(count(page, "http") == count(page, "http://www.w3.org/2000/svg") + 1);  // + the CSP's http-equiv
  CHECK(page.find("src=") == std::string::npos);
  CHECK(page.find("url(") == std::string::npos);
  // Curves: loss with validation over it, learning rate, throughput, against step.
  CHECK(count(page, "<svg") == 3);
  CHECK(page.find("stroke=\"#1f77b4\" stroke-width=\"2.5\"") != std::string::npos);
  CHECK(page.find("stroke=\"#ff7f0e\" stroke-width=\"1.5\" stroke-dasharray") != std::string::npos);
  CHECK(count(page, "<circle") == 5);
  CHECK(page.find("no preflight ran") != std::string::npos);
  CHECK(page.find("not recorded: accounting") != std::string::npos);
  CHECK(page.find("has not ended") == std::string::npos);
}

TEST_CASE("counts are in the plural but one: 1 GPU, 4 GPUs; the scheduler's usage is listed after the state") {
  ReportFacts f = facts();
  f.plan->gpus_per_node = 1;
  f.plan->cpus_per_task = 8;
  f.usage.emplace_back("elapsed", "00:01:05");
  f.usage_note = "";
  std::string page = report_html(f);
  CHECK(page.find("1 GPU per node") != std::string::npos);
  CHECK(page.find("8 CPUs each") != std::string::npos);
  CHECK(page.find("GPUs per node") == std::string::npos);
  CHECK(page.find("00:01:05") > page.find("FAILED (exit 1)"));
  f.plan->gpus_per_node = 4;
  f.plan->cpus_per_task = 1;
  page = report_html(f);
  CHECK(page.find("4 GPUs per node") != std::string::npos);
  CHECK(page.find("1 CPU each") != std::string::npos);
}

TEST_CASE("a page without curves says why; a running job's page says it stands as it is") {
  ReportFacts f = facts();
  f.curves.reset();
  f.metrics_note = "no metrics file yet: /m.jsonl";
  f.state = state_of(Phase::running);
  const std::string page = report_html(f);
  CHECK(page.find("no metrics file yet: /m.jsonl") != std::string::npos);
  CHECK(page.find("<svg") == std::string::npos);
  CHECK(page.find("has not ended: this page shows it as it stands") != std::string::npos);
}

TEST_CASE("the preflight's verdict, each node and the bandwidth, and the nodes left out") {
  ReportFacts f = facts();
  PreflightReport p;
  p.backend = "nccl";
  p.world_size = 8;
  p.bad_nodes = {"n<2>"};
  p.nodes = {{"n1", {0, 1}, 4, 1.0, {}}, {"n<2>", {2, 3}, 3, 2.9, {"3 GPU(s), expected 4"}}};
  p.allreduce = {{1048576, 0.001, 1.05, 1.8}};
  f.preflight = p;
  f.excluded = {{"n<2>", "preflight: 3 GPU(s)", 0}};
  const std::string page = report_html(f);
  CHECK(page.find("bad nodes: n&lt;2&gt;") != std::string::npos);
  CHECK(page.find("<td>1048576</td>") != std::string::npos);
  CHECK(page.find("3 GPU(s), expected 4") != std::string::npos);
  CHECK(page.find("<td>n&lt;2&gt;</td><td>preflight: 3 GPU(s)</td><td>0</td>") != std::string::npos);
  CHECK(page.find("NVLink") == std::string::npos);  // no domains: no such column or table
}

TEST_CASE("the preflight's NVLink domains: each node's domain and the busbw inside it, the groups, the shortfalls") {
  ReportFacts f = facts();
  PreflightReport p;
  p.backend = "nccl";
  p.world_size = 4;
  p.ok = true;
  p.nodes = {{"n1", {0, 1}, 2, 1.0, {}, "U/1"}, {"n2", {2, 3}, 2, 1.0, {}, "U/2"}, {"n3", {4}, 2, 1.0, {}, ""}};
  p.nvlink_domains = {{"U/1", {"n1"}, {0, 1}, 1 << 20, 0.001, 1, 610.5}, {"U/2", {"n2"}, {2, 3}, 1 << 20, 0.01, 1, 120.5}};
  p.across_domains = {{"rail 0", {"n1", "n2"}, {0, 2}, 1 << 20, 0.02, 1, 40}};
  p.expected_nvlink_busbw_gbs = 700;
  p.domain_shortfalls = {"NVLink domain U/2 (n2): busbw 120.25 GB/s inside it, below half the 700 GB/s it gives"};
  f.preflight = p;
  const std::string page = report_html(f);
  CHECK(page.find("<th>NVLink domain</th><th>busbw inside it (GB/s)</th>") != std::string::npos);
  CHECK(page.find("<td>n2</td><td>2,3</td><td>2</td><td>1</td><td>U/2</td><td>120.5</td>") != std::string::npos);
  CHECK(page.find("<td>n3</td><td>4</td><td>2</td><td>1</td><td>none</td><td></td>") != std::string::npos);
  CHECK(page.find("<td>rail 0</td><td>n1, n2</td><td>0,2</td><td>1048576</td><td>40</td>") != std::string::npos);
  CHECK(page.find("<p class=\"bad\">NVLink domain U/2 (n2): busbw 120.25 GB/s") != std::string::npos);
  CHECK(page.find("expected: 700 GB/s inside a domain, 0 GB/s across") != std::string::npos);
}

TEST_CASE("an array's page is a table of its tasks, the best marked, each linked to its page") {
  ReportFacts f = facts();
  f.keys = {"lr"};
  f.tasks = {{0, "9_0", "lr=0.1", state_of(Phase::completed, 0), {{"lr", "0.1"}}, Point{40, 0, 0.5}, 50, "tasks/0/report.html"},
             {1, "9_1", "lr=1", state_of(Phase::running), {{"lr", "1"}}, Point{20, 0, 0.25}, 20, "tasks/1/report.html"},
             {2, "9_2", "lr=<x>", state_of(Phase::pending), {{"lr", "<x>"}}, std::nullopt, -1, "tasks/2/report.html"}};
  const std::string page = report_html(f);
  CHECK(page.find("<section id=\"tasks\"><h2>Tasks (3)</h2>") != std::string::npos);
  CHECK(page.find("<tr class=\"best\"><td>1</td>") != std::string::npos);
  CHECK(page.find("<a href=\"tasks/2/report.html\">report</a>") != std::string::npos);
  CHECK(page.find("<td>&lt;x&gt;</td>") != std::string::npos);
  CHECK(page.find("(no metrics)") != std::string::npos);
  CHECK(page.find("<section id=\"timeline\">") == std::string::npos);
}

TEST_CASE("--json holds the page's facts, its curves thinned as drawn") {
  ReportFacts f = facts();
  f.tasks = {{0, "9_0", "lr=0.1", state_of(Phase::completed, 0), {{"lr", "0.1"}}, Point{40, 0, 0.5}, 50, "tasks/0/report.html"}};
  nlohmann::json j = report_json(f);
  CHECK(j["schema"] == "hpclaunch.report/1");
  CHECK(j["job_id"] == "1234");
  CHECK(j["state"]["phase"] == "failed");
  CHECK(j["plan"]["account"] == "m1_g");
  CHECK(j["script"] == f.script);
  CHECK(j["timeline"][1]["kind"] == "hang");
  CHECK(j["timeline"][1]["wall_s"].is_null());
  CHECK(j["ranks"][0]["last_lines"][0] == "[n1:0] step 50 <ok>");
  CHECK(j["curves"]["fields"][0]["field"] == "loss");
  CHECK(j["curves"]["fields"][0]["points"] == 50);
  CHECK(j["curves"]["fields"][0]["drawn"].size() == 50);
  CHECK(j["curves"]["fields"][0]["last"]["step"] == 50);
  CHECK(j["preflight"].is_null());
  CHECK(j["usage"]["state"] == "FAILED (exit 1)");
  CHECK(j["tasks"][0]["best_validation"]["value"] == 0.5);
  CHECK(j["tasks"][0]["state"]["phase"] == "completed");
}

TEST_SUITE_END();

}  // namespace report_test
