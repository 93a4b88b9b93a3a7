#include "plot/panels.h"

#include <algorithm>
#include <cmath>
#include <filesystem>
#include <functional>
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
  if (values.empty()) return false;
  auto [lo, hi] = std::minmax_element(values.begin(), values.end());
  return *lo > 0 && *hi / *lo > 20;
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
    for (double y : s.y) y0 = std::min(y0, y), y1 = std::max(y1, y);
  }
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

using Pick = std::function<void(const Metrics&, double x_scale, bool by_time, Series&)>;

}  // namespace

std::vector<Panel> make_panels(const std::vector<Metrics>& runs, const std::vector<std::string>& labels) {
  double max_wall = 0;
  for (const auto& m : runs) {
    for (const auto& s : m.steps) max_wall = std::max(max_wall, s.wall_s);
    for (const auto& v : m.validations) max_wall = std::max(max_wall, v.wall_s);
  }
  const TimeUnit unit = time_unit_for(max_wall);
  const std::string time_label = std::string("wall time (") + unit.name + ")";

  struct Quantity {
    const char* title;
    const char* y_label;
    bool may_log;
    Pick pick;
  };
  auto steps = [](double StepRecord::*field) {
    return Pick([field](const Metrics& m, double scale, bool by_time, Series& s) {
      for (const auto& r : m.steps) {
        s.x.push_back(by_time ? r.wall_s / scale : static_cast<double>(r.step));
        s.y.push_back(r.*field);
      }
    });
  };
  const Quantity quantities[] = {
      {"Training loss", "loss", true, steps(&StepRecord::loss)},
      {"Validation loss", "loss", true,
       [](const Metrics& m, double scale, bool by_time, Series& s) {
         for (const auto& r : m.validations) {
           s.x.push_back(by_time ? r.wall_s / scale : static_cast<double>(r.step));
           s.y.push_back(r.val_loss);
         }
       }},
      {"Learning rate", "learning rate", false, steps(&StepRecord::lr)},
      {"Throughput", "samples/s", false, steps(&StepRecord::samples_per_s)},
  };
  std::vector<Panel> panels;
  for (const auto& q : quantities) {
    for (bool by_time : {false, true}) {
      Panel p;
      p.title = std::string(q.title) + (by_time ? " vs wall time" : " vs step");
      p.x_label = by_time ? time_label : "step";
      p.y_label = q.y_label;
      std::vector<double> all;
      for (size_t i = 0; i < runs.size(); ++i) {
        Series s;
        s.run = static_cast<int>(i);
        s.label = i < labels.size() ? labels[i] : runs[i].path;
        q.pick(runs[i], unit.seconds, by_time, s);
        all.insert(all.end(), s.y.begin(), s.y.end());
        p.series.push_back(std::move(s));
      }
      p.log_y = q.may_log && wants_log_scale(all);
      fit_ranges(p);
      panels.push_back(std::move(p));
    }
  }
  return panels;
}

}  // namespace hpclaunch
