#include "jobs/run_curves.h"

#include <algorithm>
#include <cmath>
#include <optional>
#include <set>
#include <variant>

#include "metrics/records.h"
#include "util/error.h"
#include "util/file.h"
#include "util/strings.h"

namespace hpclaunch {

namespace {

const char* k_curves_fix = "give a file written by `hpclaunch-train --metrics`, or JSON lines with a numeric \"step\"";

// A user log's fields that count or keep time rather than measure training: not drawn.
const std::set<std::string> k_not_drawn = {"epoch", "time", "wall_s", "timestamp", "step_time_s", "iteration", "iter",
                                           "global_step", "batch"};

Curve& curve_for(RunCurves& m, const std::string& field) {
  for (auto& c : m.curves)
    if (c.field == field) return c;
  m.curves.push_back({field, {}});
  return m.curves.back();
}

void add(RunCurves& m, const std::string& field, long long step, double wall_s, double value) {
  curve_for(m, field).points.push_back({step, wall_s, value});
}

void mark(RunCurves& m, long long step, double wall_s, const std::string& what) {
  for (const auto& k : m.marks)
    if (k.step == step) return;
  m.marks.push_back({step, wall_s, what});
}

// A run resumed from a checkpoint (requeue, restart) appends records from the checkpoint on: the ones it repeats
// are replaced by the resumed run's, so every step is plotted once.
void drop_from(RunCurves& m, long long step) {
  for (auto& c : m.curves)
    while (!c.points.empty() && c.points.back().step >= step) c.points.pop_back();
  while (!m.marks.empty() && m.marks.back().step >= step) m.marks.pop_back();
}

std::optional<double> user_value(const metrics::UserRecord& u, const char* key) {
  for (const auto& [k, v] : u.values)
    if (k == key && std::isfinite(v)) return v;
  return std::nullopt;
}

// What the record says of the clock: its "time" (Unix seconds), its "wall_s", the time it took.
struct Stamp {
  std::optional<double> time, wall_s;
  double took = 0;
};

Stamp stamp_of(const metrics::Record& r) {
  if (auto* s = std::get_if<metrics::Step>(&r)) return {s->time, s->wall_s, std::isfinite(s->step_time_s) ? s->step_time_s : 0};
  if (auto* v = std::get_if<metrics::Validation>(&r)) return {v->time, v->wall_s, std::isfinite(v->time_s) ? v->time_s : 0};
  if (auto* b = std::get_if<metrics::RunStart>(&r)) return {b->time, std::nullopt, 0};
  if (auto* e = std::get_if<metrics::RunEnd>(&r)) return {e->time, std::nullopt, 0};
  if (auto* u = std::get_if<metrics::UserRecord>(&r))
    return {user_value(*u, "time"), user_value(*u, "wall_s"), user_value(*u, "step_time_s").value_or(0)};
  return {};
}

}  // namespace

const Curve* RunCurves::curve(std::string_view field) const {
  for (const auto& c : curves)
    if (c.field == field) return &c;
  return nullptr;
}

std::string canonical_field(const std::string& field) {
  static const std::pair<const char*, const char*> k_aliases[] = {
      {"train_loss", "loss"},         {"training_loss", "loss"},   {"learning_rate", "lr"},
      {"eval_loss", "val_loss"},      {"valid_loss", "val_loss"},  {"validation_loss", "val_loss"},
      {"test_loss", "val_loss"},      {"throughput", "samples_per_s"}, {"samples_per_sec", "samples_per_s"},
      {"samples_per_second", "samples_per_s"}};
  for (const auto& [alias, name] : k_aliases)
    if (field == alias) return name;
  return field;
}

RunCurves parse_run_curves(std::string_view text, const std::string& path) {
  RunCurves m;
  m.path = path;
  if (trim(text).empty())
    throw Error(path, "is empty: no metrics were written",
                k_curves_fix + std::string(" (the run may not have started)"));
  double clock = 0;  // the sum of step and validation times, for records without "time" or "wall_s"
  std::optional<double> first_time;  // the first record's "time" (Unix seconds): wall time counts from it
  std::optional<long long> last_step, last_user_step;
  bool user_values = false;
  std::string where;  // path:LINE, for errors (one buffer for all lines)
  size_t number = 0;
  for (size_t at = 0; at < text.size();) {
    const size_t newline = text.find('\n', at);
    const bool cut = newline == std::string_view::npos;  // the last line, without its newline
    std::string_view line = trim(text.substr(at, cut ? std::string_view::npos : newline - at));
    at = cut ? text.size() : newline + 1;
    ++number;
    if (line.empty()) continue;
    where.assign(path).append(":").append(std::to_string(number));
    const std::optional<metrics::Record> record = metrics::parse_line(line, where);
    if (!record) {
      if (cut)
        throw Error(where, "the last line is cut short (the run was stopped while writing it?)",
                    "remove that line to plot the rest");
      std::string shown(line.substr(0, 40));
      throw Error(where, "not a JSON object: '" + shown + (line.size() > 40 ? "...'" : "'"), k_curves_fix);
    }
    const Stamp stamp = stamp_of(*record);
    clock += stamp.took;
    double wall = stamp.wall_s.value_or(clock);
    if (stamp.time) {  // as TensorBoard's relative time: queue waits between requeued runs count
      if (!first_time) first_time = stamp.time;
      wall = *stamp.time - *first_time;
    }
    const bool run_start = std::holds_alternative<metrics::RunStart>(*record);
    if (!run_start && !m.runs.empty() && m.runs.back().status.empty()) m.runs.back().end_wall_s = wall;  // it goes on
    if (auto* b = std::get_if<metrics::RunStart>(&*record)) {
      m.runs.push_back({b->step, wall, -1, wall, "", 0, static_cast<int>(b->world_size)});
    } else if (auto* s = std::get_if<metrics::Step>(&*record)) {
      if (!m.runs.empty()) m.runs.back().end_step = s->step;
      if (last_step && s->step <= *last_step) drop_from(m, s->step);  // a resumed run
      last_step = s->step;
      add(m, "loss", s->step, wall, s->loss);
      add(m, "lr", s->step, wall, s->lr);
      add(m, "samples_per_s", s->step, wall, s->samples_per_s);
      if (!std::isfinite(s->loss)) mark(m, s->step, wall, s->skipped ? "step skipped: non-finite loss" : "non-finite loss");
    } else if (auto* v = std::get_if<metrics::Validation>(&*record)) {
      add(m, "val_loss", v->step, wall, v->val_loss);
    } else if (auto* e = std::get_if<metrics::RunEnd>(&*record)) {
      if (!m.runs.empty() && m.runs.back().status.empty()) {
        m.runs.back().status = e->status;
        m.runs.back().exit_code = e->exit_code;
        m.runs.back().end_step = std::max(m.runs.back().end_step, static_cast<long long>(e->step));
      }
      if (e->status == "nonfinite" && e->nonfinite_step) mark(m, *e->nonfinite_step, wall, "stopped: non-finite loss");
    } else if (auto* u = std::get_if<metrics::UserRecord>(&*record)) {
      if (last_user_step && u->step < *last_user_step) drop_from(m, u->step);  // a restarted script
      last_user_step = u->step;
      for (const auto& [key, value] : u->values) {
        if (k_not_drawn.count(key)) {
          if (std::find(m.not_drawn.begin(), m.not_drawn.end(), key) == m.not_drawn.end()) m.not_drawn.push_back(key);
          continue;
        }
        const std::string field = canonical_field(key);
        add(m, field, u->step, wall, value);
        user_values = true;
        if (field == "loss" && !std::isfinite(value)) mark(m, u->step, wall, "non-finite loss");
      }
    }
    // Record types this reader does not know draw nothing.
  }
  m.user_log = !last_step && user_values;
  if (!last_step && !user_values)
    throw Error(path,
                "holds no step records ({\"type\":\"step\",...}) and no JSON lines with a numeric \"step\" and other "
                "numbers",
                k_curves_fix);
  return m;
}

RunCurves read_run_curves(const std::string& path) {
  auto text = read_file(path);
  if (!text) throw Error(path, "cannot read the metrics file (missing or unreadable)", "check the path; for a job, give its directory");
  return parse_run_curves(*text, path);
}

}  // namespace hpclaunch
