// What `hpclaunch plot` draws, decided apart from drawing: four quantities (training loss, validation loss,
// learning rate, samples/s) against step and against wall time, one series per run; axis ranges, log scales and
// the wall-time unit. Pure, so tests check the choices; plot/plot.cc hands the panels to PLplot.
#pragma once
#include <string>
#include <vector>

#include "jobs/metrics.h"

namespace hpclaunch {

struct Series {
  std::string label;  // the run's name in the legend
  int run = 0;        // index of the run: its colour
  std::vector<double> x, y;
};

struct Panel {
  std::string title, x_label, y_label;
  bool log_y = false;
  double x_min = 0, x_max = 1, y_min = 0, y_max = 1;  // y range in data units (log_y: both > 0)
  std::vector<Series> series;
  bool empty() const;  // no points in any series
};

struct TimeUnit {
  const char* name;  // "s", "min", "h"
  double seconds;
};
// The unit that keeps the largest wall time readable: seconds up to 2 min, minutes up to 2 h, then hours.
TimeUnit time_unit_for(double max_seconds);

// Loss axes go logarithmic when every value is positive and they span more than a factor of 20.
bool wants_log_scale(const std::vector<double>& values);

// Names for the runs' legend: file names when they differ, else their directories' names, else the paths.
std::vector<std::string> run_labels(const std::vector<std::string>& paths);

// Eight panels, row by row: {loss, validation loss, learning rate, samples/s} x {step, wall time}.
std::vector<Panel> make_panels(const std::vector<Metrics>& runs, const std::vector<std::string>& labels);

}  // namespace hpclaunch
