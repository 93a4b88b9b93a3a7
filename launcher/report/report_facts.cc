// The report's facts that are worked out rather than read: the timeline, each rank's lines, the thinned curves.
#include <fmt/core.h>

#include <algorithm>
#include <cmath>
#include <deque>
#include <map>
#include <regex>

#include "jobs/log_filter.h"
#include "report/report.h"
#include "util/command.h"  // signal_name
#include "util/strings.h"

namespace hpclaunch {

namespace {

// How a run ended, in a word for the timeline's kind and a line for what.
std::pair<std::string, std::string> run_end(const RunSpan& r, bool last, const JobState& state) {
  const std::string at = r.end_step >= 0 ? fmt::format(" at step {}", r.end_step) : std::string(" before its first step");
  if (r.status == "done") return {"end", "completed" + at};
  if (r.status == "stopped")
    return {"requeue", fmt::format("stopped by a signal{} (exit {}): preempted or warned of its time limit, saved to "
                                   "be requeued", at, r.exit_code)};
  if (r.status == "nonfinite") return {"end", "stopped: non-finite loss" + at};
  if (!r.status.empty()) return {"end", r.status + at};
  if (last && !state.finished()) return {"run", "running" + at};
  if (last) return {"end", "ended without a run_end record" + at + " (killed)"};
  return {"restart", "ended without a run_end record" + at + ": killed, and restarted"};
}

std::string failure_detail(const Failure& f) {
  std::vector<std::string> lines;
  if (!f.frame.empty()) lines.push_back("where it hung: " + f.frame);
  if (!f.stacks.empty()) lines.push_back("every rank's stacks: " + f.stacks);
  if (!f.error.empty()) lines.push_back(f.error);
  if (!f.stderr_tail.empty()) lines.push_back(f.stderr_tail);
  return join(lines, "\n");
}

std::string failure_kind(const Failure& f) {
  if (f.hang_s > 0) return "hang";
  if (f.node_lost) return "lost node";
  return "failure";
}

}  // namespace

std::vector<TimelineEvent> make_timeline(const std::vector<RunSpan>& runs, const std::vector<std::string>& hangs,
                                         const std::vector<std::string>& replaced,
                                         const std::vector<ExcludedNode>& excluded,
                                         const std::optional<Failure>& failure, const JobState& state) {
  std::vector<TimelineEvent> out;
  for (size_t i = 0; i < runs.size(); ++i) {
    const RunSpan& r = runs[i];
    const int run = static_cast<int>(i);
    std::string start = r.start_step > 0 ? fmt::format("run {} resumed from step {}", i, r.start_step)
                                         : fmt::format("run {} started", i);
    if (r.world_size > 0) start += fmt::format(" ({} workers)", r.world_size);
    out.push_back({r.start_wall_s, run, "run", start, ""});
    auto [kind, what] = run_end(r, i + 1 == runs.size(), state);
    if (kind != "run") out.push_back({r.end_wall_s, run, kind, fmt::format("run {} ", i) + what, ""});
  }
  for (const auto& n : excluded)
    out.push_back({std::nullopt, n.run, "excluded", fmt::format("{} left out from run {}: {}", n.node, n.run, n.reason), ""});
  for (const auto& h : hangs) out.push_back({std::nullopt, std::nullopt, "hang", h, ""});
  for (const auto& r : replaced) out.push_back({std::nullopt, std::nullopt, "spare", r, ""});
  if (failure)
    out.push_back({std::nullopt, std::nullopt, failure_kind(*failure), "root cause: " + describe(*failure),
                   failure_detail(*failure)});
  if (runs.empty() && state.finished())
    out.push_back({std::nullopt, std::nullopt, "end", "the job ended: " + describe(state), ""});
  return out;
}

namespace {

// What the agents logged of a worker's end ("hpclaunch agent[n2]: worker failed: rank 3 (local rank 1) on n2
// exited with code 7; ...", agent/agent_state.cc with agent/failure.cc's describe): each node's first failed
// worker in each attempt. A rank's last such line, as "exited with code 7" or "killed by SIGSEGV".
std::optional<std::pair<int, std::string>> logged_exit(const std::string& line) {
  static const std::regex k_exit(R"(hpclaunch agent\[[^\]]*\]: worker (?:failed: )?rank (\d+) \(local rank \d+\) on \S+ )"
                                 R"((exited with code -?\d+|was killed by SIG[A-Z0-9]+))");
  std::smatch m;
  if (!std::regex_search(line, m, k_exit)) return std::nullopt;
  std::string how = m[2].str();
  if (how.rfind("was ", 0) == 0) how.erase(0, 4);
  return std::pair{std::stoi(m[1].str()), how + " (the agent's log)"};
}

}  // namespace

std::vector<RankFacts> rank_facts(const std::string& output, size_t keep, const std::optional<Failure>& failure,
                                  const JobState& state) {
  std::map<int, std::deque<std::string>> last;
  std::map<int, std::string> logged;
  for (const auto& line : split(output, '\n')) {
    if (line.find("hpclaunch agent[") != std::string::npos)
      if (auto exit = logged_exit(line)) {
        logged[exit->first] = exit->second;
        last[exit->first];  // a rank the agents name has a row, lines or not
      }
    std::optional<int> rank = line_rank(line);
    if (!rank) continue;
    auto& lines = last[*rank];
    lines.push_back(line);
    if (lines.size() > keep) lines.pop_front();
  }
  if (failure && failure->rank >= 0) last[failure->rank];  // the blamed rank has a row, lines or not
  std::vector<RankFacts> out;
  for (auto& [rank, lines] : last) {
    RankFacts r{rank, {lines.begin(), lines.end()}, "not recorded"};
    if (failure && failure->rank == rank)
      r.exit = failure->signal ? "killed by " + signal_name(failure->signal)
                               : fmt::format("exited with code {}", failure->exit_code);
    else if (state.succeeded())
      r.exit = "exited 0 (the job completed)";
    else if (auto it = logged.find(rank); it != logged.end())
      r.exit = it->second;
    out.push_back(std::move(r));
  }
  return out;
}

Series thin_series(const Series& s, double x_min, double x_max, size_t columns) {
  if (columns < 2 || s.x.size() <= 2 * columns) return s;
  Series out = s;
  out.x.clear(), out.y.clear();
  const double width = x_max > x_min ? x_max - x_min : 1;
  std::optional<size_t> low, high, column;  // this column's lowest and highest finite value
  auto flush = [&] {
    if (!low) return;
    const size_t first = std::min(*low, *high), second = std::max(*low, *high);
    out.x.push_back(s.x[first]), out.y.push_back(s.y[first]);
    if (second != first) out.x.push_back(s.x[second]), out.y.push_back(s.y[second]);
    low.reset(), high.reset();
  };
  for (size_t i = 0; i < s.x.size(); ++i) {
    const auto c = static_cast<size_t>(std::clamp((s.x[i] - x_min) / width, 0.0, 1.0) * static_cast<double>(columns - 1));
    if (c != column) flush(), column = c;
    if (!std::isfinite(s.y[i])) {  // a gap stays a gap
      flush();
      out.x.push_back(s.x[i]), out.y.push_back(s.y[i]);
      continue;
    }
    if (!low || s.y[i] < s.y[*low]) low = i;
    if (!high || s.y[i] > s.y[*high]) high = i;
  }
  flush();
  return out;
}

std::string html_escape(const std::string& text) {
  std::string out;
  out.reserve(text.size());
  size_t plain = 0;  // the first character not copied yet: plain text is copied a run at a time (each task page of
                     // a 1,000-task array holds the array's job.sh, 36 KB in bench/report/)
  for (size_t i = 0; i < text.size(); ++i) {
    const char c = text[i];
    if (c != '&' && c != '<' && c != '>' && c != '"' && c != '\'') continue;
    out.append(text, plain, i - plain);
    out += c == '&' ? "&amp;" : c == '<' ? "&lt;" : c == '>' ? "&gt;" : c == '"' ? "&quot;" : "&#39;";
    plain = i + 1;
  }
  return out.append(text, plain, std::string::npos);
}

}  // namespace hpclaunch
