#include "agent/failure.h"
#include "util/file.h"

#include <fmt/core.h>
#include <string.h>

#include <csignal>
#include <nlohmann/json.hpp>
#include <sstream>

#include "util/command.h"  // signal_name
#include "util/json_numbers.h"

namespace hpclaunch {

std::string describe(const Failure& f) {
  if (f.rank < 0) return f.reason;
  if (f.hang_s > 0) {
    std::string s = fmt::format("rank {} (local rank {}) on {} {} for {:.0f} s", f.rank, f.local_rank, f.host,
                                f.hang_source == "output" ? "printed nothing (no worker did)" : "made no progress",
                                f.hang_s);
    if (!f.frame.empty()) s += ", in " + f.frame;
    return s;
  }
  std::string how = f.signal ? "was killed by " + signal_name(f.signal) : fmt::format("exited with code {}", f.exit_code);
  return fmt::format("rank {} (local rank {}) on {} {}", f.rank, f.local_rank, f.host, how);
}

std::string format_summary(const Failure& f, int restart_count, int max_restarts) {
  std::string s = "root cause: " + describe(f);
  if (max_restarts > 0) s += fmt::format(" (after {} of {} restarts)", restart_count, max_restarts);
  if (!f.stacks.empty()) s += "\nstacks of every rank: " + f.stacks;
  if (f.no_progress > 0) s += "\n" + no_progress_line(f.no_progress);
  if (!f.error.empty()) {
    s += "\nerror file of rank " + std::to_string(f.rank) + ":";
    std::istringstream lines(f.error);
    for (std::string line; std::getline(lines, line);) s += "\n  " + line;
  } else if (!f.stderr_tail.empty()) {
    s += "\nlast lines of rank " + std::to_string(f.rank) + "'s stderr:";
    std::istringstream lines(f.stderr_tail);
    for (std::string line; std::getline(lines, line);) s += "\n  " + line;
  }
  return s;
}

std::string no_progress_line(int attempts) {
  return fmt::format("no progress in {} attempts in a row: stopped, not requeued", attempts);
}

namespace {

std::string keep_tail(std::string s, size_t limit) {
  if (s.size() <= limit) return s;
  return "..." + s.substr(s.size() - limit);  // the end of a traceback says most
}

}  // namespace

std::string summarize_error_file(std::string_view contents, size_t limit) {
  auto j = nlohmann::json::parse(contents, nullptr, false);
  if (j.is_discarded() || !j.is_object() || !j.contains("message")) return keep_tail(std::string(contents), limit);
  const auto& m = j["message"];
  if (m.is_string()) return keep_tail(m.get<std::string>(), limit);
  if (!m.is_object()) return keep_tail(std::string(contents), limit);  // a worker's file, whatever it holds: no throw
  auto text = [](const nlohmann::json& o, const char* key) {
    auto it = o.find(key);
    return it != o.end() && it->is_string() ? it->get<std::string>() : std::string();
  };
  std::string out = text(m, "message");
  if (auto info = m.find("extraInfo"); info != m.end() && info->is_object()) {
    std::string stack = text(*info, "py_callstack");
    if (!stack.empty()) out += "\n" + stack;
  }
  while (!out.empty() && out.back() == '\n') out.pop_back();
  return keep_tail(out, limit);
}

std::string read_error_file(const std::string& path) {
  auto text = read_file(path);
  if (!text || text->empty()) return {};
  return summarize_error_file(*text);
}

void to_json(nlohmann::json& j, const Failure& f) {
  j = {{"host", f.host},     {"node_rank", f.node_rank}, {"rank", f.rank},     {"local_rank", f.local_rank},
       {"exit_code", f.exit_code}, {"signal", f.signal}, {"error", f.error}, {"reason", f.reason},
       {"node_lost", f.node_lost}};
  if (f.hang_s > 0)
    j["hang"] = {{"seconds", f.hang_s}, {"source", f.hang_source}, {"frame", f.frame}, {"stacks", f.stacks},
                 {"stopped", f.hang_stopped}, {"waits_for_peers", f.hang_waits_for_peers}};
  if (f.no_progress > 0) j["no_progress"] = f.no_progress;
  if (!f.stderr_tail.empty()) j["stderr_tail"] = f.stderr_tail;
}

std::optional<Failure> parse_failure_record(std::string_view text) {
  nlohmann::json j = nlohmann::json::parse(text, nullptr, false);
  if (!j.is_object()) return std::nullopt;
  return j.get<Failure>();
}

void from_json(const nlohmann::json& j, Failure& f) {
  f.host = j.value("host", "");
  f.node_rank = json_int(j, "node_rank", -1);
  f.rank = json_int(j, "rank", -1);
  f.local_rank = json_int(j, "local_rank", -1);
  f.exit_code = json_int(j, "exit_code", 0);
  f.signal = json_int(j, "signal", 0);
  f.error = j.value("error", "");
  f.reason = j.value("reason", "");
  f.node_lost = j.value("node_lost", false);
  if (auto h = j.find("hang"); h != j.end() && h->is_object()) {
    f.hang_s = h->value("seconds", 0.0);
    f.hang_source = h->value("source", "");
    f.frame = h->value("frame", "");
    f.stacks = h->value("stacks", "");
    f.hang_stopped = h->value("stopped", false);
    f.hang_waits_for_peers = h->value("waits_for_peers", false);
  }
  f.no_progress = json_int(j, "no_progress", 0);
  f.stderr_tail = j.value("stderr_tail", "");
}

bool better_hang(const Failure& a, const Failure& b) {
  if (a.hang_stopped != b.hang_stopped) return a.hang_stopped;
  if (a.hang_waits_for_peers != b.hang_waits_for_peers) return !a.hang_waits_for_peers;
  return a.hang_s > b.hang_s + 1.5;  // within the progress files' pace they are as old
}

std::string faulty_node(const Failure& f) {
  if (f.node_lost || (f.rank >= 0 && f.signal == SIGBUS)) return f.host;
  return "";
}

}  // namespace hpclaunch
