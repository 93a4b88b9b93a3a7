#include "plot/panels.h"

#include <algorithm>
#include <cmath>
#include <filesystem>
#include <set>

namespace hpclaunch {

namespace fs = std::filesystem;

bool Panel::empty() const {
  for (const auto& s : series)
    if (!s.x.empty()) return false;
  return true;
}

TimeUnit time_unit_for(double max_seconds) {
  if (max_seconds <= 120) return {"s", 1};
  if (max_seconds <= 7200) return {"min", 60};
  return {"h", 3600};
}

bool wants_log_scale(const std::vector<double>& values) {
  double lo = INFINITY, hi = -INFINITY;
  for (double v : values)
    if (std::isfinite(v)) lo = std::min(lo, v), hi = std::max(hi, v);
  return lo <= hi && lo > 0 && hi / lo > 20;
}

std::vector<std::string> run_labels(const std::vector<std::string>& paths) {
  auto distinct = [](const std::vector<std::string>& v) { return std::set<std::string>(v.begin(), v.end()).size() == v.size(); };
  std::vector<std::string> files, dirs;
  for (const auto& p : paths) {
    fs::path path(p);
    files.push_back(path.filename().string());
    dirs.push_back(path.parent_path().filename().string());
  }
  if (distinct(files) && !(paths.size() > 1 && files[0] == "metrics.jsonl")) return files;
  if (distinct(dirs)) return dirs;
  return paths;
}

namespace {

// Fills the panel's ranges from its points, with a margin; log axes get a factor instead of a margin.
void fit_ranges(Panel& p) {
  double x0 = INFINITY, x1 = -INFINITY, y0 = INFINITY, y1 = -INFINITY;
  for (const auto& s : p.series) {
    for (double x : s.x) x0 = std::min(x0, x), x1 = std::max(x1, x);
    for (double y : s.y)
      if (std::isfinite(y)) y0 = std::min(y0, y), y1 = std::max(y1, y);  // NaN: a gap
  }
  if (!p.empty())
    for (double x : p.marks) x0 = std::min(x0, x), x1 = std::max(x1, x);
  if (!(x0 <= x1)) x0 = 0, x1 = 1;
  if (!(y0 <= y1)) y0 = 0, y1 = 1;
  if (x1 == x0) x1 = x0 + 1;
  p.x_min = x0;
  p.x_max = x1;
  if (p.log_y) {
    p.y_min = y0 / 1.2;
    p.y_max = y1 * 1.2;
    return;
  }
  double pad = y1 > y0 ? (y1 - y0) * 0.05 : std::max(std::abs(y0) * 0.05, 1e-12);
  p.y_min = y0 - pad;
  p.y_max = y1 + pad;
  if (y0 >= 0 && p.y_min < 0) p.y_min = 0;  // rates and throughputs are never negative
}

// The standard quantities: the field each draws, its title and axis, whether it is smoothed, and the field drawn
// over it (validation over training loss, on the same scale).
struct Quantity {
  std::string field, title, y_label;
  bool may_log;
  bool smoothed = false;
  std::string overlay;
};
const Quantity k_standard[] = {{"loss", "Loss", "loss", true, true, "val_loss"},
                               {"lr", "Learning rate", "learning rate", false},
                               {"samples_per_s", "Throughput", "samples/s", false, true}};

bool is_standard(const std::string& field) {
  for (const auto& q : k_standard)
    if (q.field == field || q.overlay == field) return true;
  return false;
}

}  // namespace

std::vector<double> smooth(const std::vector<double>& y, double weight) {
  std::vector<double> out;
  out.reserve(y.size());
  double last = 0;
  int n = 0;
  for (double v : y) {
    if (!std::isfinite(v)) {
      out.push_back(v);
      continue;
    }
    last = last * weight + (1 - weight) * v;
    ++n;
    const double debias = 1 - std::pow(weight, n);
    out.push_back(debias > 0 ? last / debias : v);
  }
  return out;
}

std::vector<Panel> make_panels(const std::vector<RunCurves>& runs, const std::vector<std::string>& labels,
                               double smoothing) {
  double max_wall = 0;
  for (const auto& m : runs)
    for (const auto& c : m.curves)
      for (const auto& p : c.points) max_wall = std::max(max_wall, p.wall_s);
  const TimeUnit unit = time_unit_for(max_wall);
  const std::string time_label = std::string("wall time (") + unit.name + ")";

  std::vector<Quantity> quantities(std::begin(k_standard), std::end(k_standard));
  for (const auto& m : runs)
    for (const auto& c : m.curves)
      if (!is_standard(c.field) && std::none_of(quantities.begin(), quantities.end(),
                                                [&](const Quantity& q) { return q.field == c.field; }))
        quantities.push_back({c.field, c.field, c.field, true});

  std::vector<Panel> panels;
  for (const auto& q : quantities) {
    for (bool by_time : {false, true}) {
      Panel p;
      p.title = q.title + (by_time ? " vs wall time" : " vs step");
      p.x_label = by_time ? time_label : "step";
      p.y_label = q.y_label;
      std::vector<double> all;
      const bool overlaid = !q.overlay.empty() && std::any_of(runs.begin(), runs.end(), [&](const RunCurves& m) {
        const Curve* c = m.curve(q.overlay);
        return c && !c->points.empty();
      });
      for (size_t i = 0; i < runs.size(); ++i) {
        const std::string run_label = i < labels.size() ? labels[i] : runs[i].path;
        auto series_of = [&](const std::string& field, const std::string& what) {
          Series s;
          s.run = s.colour = static_cast<int>(i);
          s.label = what.empty() ? run_label : run_label + ": " + what;
          if (const Curve* c = runs[i].curve(field)) {
            for (const auto& point : c->points) {
              s.x.push_back(by_time ? point.wall_s / unit.seconds : static_cast<double>(point.step));
              s.y.push_back(point.value);
            }
          }
          all.insert(all.end(), s.y.begin(), s.y.end());
          return s;
        };
        Series s = series_of(q.field, overlaid ? "training" : "");
        if (q.smoothed && smoothing > 0 && s.x.size() > 2) {
          Series raw = s;
          raw.style = Series::Style::faint;
          s.y = smooth(s.y, smoothing);
          p.series.push_back(std::move(raw));
        }
        p.series.push_back(std::move(s));
        if (overlaid) {
          Series v = series_of(q.overlay, "validation");
          v.style = Series::Style::points;
          if (runs.size() == 1) v.colour = 1;  // alone, it needs a colour of its own to stand out
          p.series.push_back(std::move(v));
        }
        for (const auto& mark : runs[i].marks)
          p.marks.push_back(by_time ? mark.wall_s / unit.seconds : static_cast<double>(mark.step));
      }
      p.log_y = q.may_log && wants_log_scale(all);
      fit_ranges(p);
      panels.push_back(std::move(p));
    }
  }
  return panels;
}

std::vector<std::string> plot_notes(const RunCurves& m) {
  auto join = [](const std::vector<std::string>& v) {
    std::string out;
    for (const auto& s : v) out += (out.empty() ? "" : ", ") + s;
    return out;
  };
  std::vector<std::string> notes;
  if (m.user_log) {
    std::vector<std::string> drawn;
    for (const auto& c : m.curves) drawn.push_back(c.field);
    std::string note = m.path + ": JSON lines without \"type\" (not hpclaunch-train's): drew " + join(drawn);
    if (!m.not_drawn.empty()) note += "; not drawn (counters and clocks): " + join(m.not_drawn);
    notes.push_back(note);
  }
  if (!m.marks.empty()) {
    std::string note = m.path + ": " + m.marks.front().what + " at step " + std::to_string(m.marks.front().step);
    if (m.marks.size() > 1) note += " and " + std::to_string(m.marks.size() - 1) + " more step(s)";
    notes.push_back(note + ", marked in red");
  }
  return notes;
}

}  // namespace hpclaunch
