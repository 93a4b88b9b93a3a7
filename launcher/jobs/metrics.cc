#include "jobs/metrics.h"

#include <fstream>
#include <optional>

#include <nlohmann/json.hpp>

#include "util/error.h"
#include "util/file.h"
#include "util/strings.h"

namespace hpclaunch {

namespace {

const char* k_fix = "give a file written by `hpclaunch-train --metrics`";

bool number(const nlohmann::json& j, const char* key, double* out) {
  auto it = j.find(key);
  if (it == j.end() || !it->is_number()) return false;
  *out = it->get<double>();
  return true;
}

// A step record, or nullopt when `j` is not one. `where` names path:line for errors; empty = do not throw.
std::optional<StepRecord> to_step(const nlohmann::json& j, const std::string& where) {
  StepRecord s;
  double step = 0;
  if (!number(j, "step", &step)) {
    if (where.empty()) return std::nullopt;
    throw Error(where, "step record without a numeric \"step\"", k_fix);
  }
  if (!number(j, "loss", &s.loss)) {
    if (where.empty()) return std::nullopt;
    throw Error(where, "step record without a numeric \"loss\"", k_fix);
  }
  s.step = static_cast<long long>(step);
  number(j, "lr", &s.lr);
  number(j, "samples_per_s", &s.samples_per_s);
  return s;
}

std::optional<ValidationRecord> to_validation(const nlohmann::json& j, const std::string& where) {
  ValidationRecord v;
  double step = 0;
  if (!number(j, "step", &step) || !number(j, "val_loss", &v.val_loss)) {
    if (where.empty()) return std::nullopt;
    throw Error(where, "validation record without numeric \"step\" and \"val_loss\"", k_fix);
  }
  v.step = static_cast<long long>(step);
  return v;
}

std::string type_of(const nlohmann::json& j) {
  auto it = j.find("type");
  return it != j.end() && it->is_string() ? it->get<std::string>() : std::string();
}

// A run resumed from a checkpoint (requeue, restart) appends steps from the checkpoint on: the records it
// repeats are replaced by the resumed run's, so every step is plotted once.
void drop_from(Metrics& m, long long step) {
  while (!m.steps.empty() && m.steps.back().step >= step) m.steps.pop_back();
  while (!m.validations.empty() && m.validations.back().step >= step) m.validations.pop_back();
}

}  // namespace

Metrics parse_metrics(std::string_view text, const std::string& path) {
  Metrics m;
  m.path = path;
  if (trim(text).empty()) throw Error(path, "is empty: no metrics were written", k_fix + std::string(" (the run may not have started)"));
  std::vector<std::string> lines = split(text, '\n');
  const bool ends_with_newline = !text.empty() && text.back() == '\n';
  double clock = 0;  // the sum of step and validation times, for records without "time" or "wall_s"
  std::optional<double> first_time;  // the first record's "time" (Unix seconds): wall time counts from it
  for (size_t i = 0; i < lines.size(); ++i) {
    std::string_view line = trim(lines[i]);
    if (line.empty()) continue;
    const std::string where = path + ":" + std::to_string(i + 1);
    nlohmann::json j = nlohmann::json::parse(line, nullptr, false);
    if (j.is_discarded() || !j.is_object()) {
      const bool last = i + 1 == lines.size() || (i + 2 == lines.size() && lines.back().empty());
      if (last && !ends_with_newline)
        throw Error(where, "the last line is cut short (the run was stopped while writing it?)",
                    "remove that line to plot the rest");
      std::string shown(line.substr(0, 40));
      throw Error(where, "not a JSON object: '" + shown + (line.size() > 40 ? "...'" : "'"), k_fix);
    }
    const std::string type = type_of(j);
    double wall = 0, time = 0;
    bool has_wall = number(j, "wall_s", &wall);
    if (number(j, "time", &time)) {  // as TensorBoard's relative time: queue waits between requeued runs count
      if (!first_time) first_time = time;
      wall = time - *first_time;
      has_wall = true;
    }
    if (type == "step") {
      StepRecord s = *to_step(j, where);
      if (!m.steps.empty() && s.step <= m.steps.back().step) drop_from(m, s.step);  // a resumed run
      double dt = 0;
      number(j, "step_time_s", &dt);
      clock += dt;
      s.wall_s = has_wall ? wall : clock;
      m.steps.push_back(s);
    } else if (type == "validation") {
      ValidationRecord v = *to_validation(j, where);
      double dt = 0;
      number(j, "time_s", &dt);
      clock += dt;
      v.wall_s = has_wall ? wall : clock;
      m.validations.push_back(v);
    }
    // Other record types (a future "summary", ...) are not plotted.
  }
  if (m.steps.empty()) throw Error(path, "holds no step records ({\"type\":\"step\",...})", k_fix);
  return m;
}

Metrics read_metrics(const std::string& path) {
  auto text = read_file(path);
  if (!text) throw Error(path, "cannot read the metrics file (missing or unreadable)", "check the path; for a job, give its directory");
  return parse_metrics(*text, path);
}

LatestMetrics latest_metrics(std::string_view tail) {
  LatestMetrics out;
  // Only whole lines: the part after the last newline may be mid-write.
  size_t end = tail.rfind('\n');
  if (end == std::string_view::npos) return out;
  std::vector<std::string> lines = split(tail.substr(0, end), '\n');
  for (auto it = lines.rbegin(); it != lines.rend() && !(out.step && out.validation); ++it) {
    nlohmann::json j = nlohmann::json::parse(*it, nullptr, false);
    if (j.is_discarded() || !j.is_object()) continue;
    const std::string type = type_of(j);
    if (type == "step" && !out.step) out.step = to_step(j, "");
    else if (type == "validation" && !out.validation) out.validation = to_validation(j, "");
  }
  return out;
}

std::string read_file_tail(const std::string& path, size_t max_bytes) {
  std::ifstream in(path, std::ios::binary | std::ios::ate);
  if (!in) return {};
  std::streamoff size = in.tellg();
  std::streamoff start = size > static_cast<std::streamoff>(max_bytes) ? size - static_cast<std::streamoff>(max_bytes) : 0;
  in.seekg(start);
  std::string out(static_cast<size_t>(size - start), '\0');
  in.read(out.data(), static_cast<std::streamsize>(out.size()));
  out.resize(static_cast<size_t>(in.gcount()));
  return out;
}

}  // namespace hpclaunch
