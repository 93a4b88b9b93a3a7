// What `hpclaunch plot` draws, decided apart from drawing: three panels (the loss, training and validation on one
// scale; the learning rate; samples/s), and a user log's other numeric fields, against step and against wall time,
// series per run; noisy curves smoothed as TensorBoard does (a debiased EMA, the raw line kept faint); gaps where a
// value was not finite and marks where that happened; axis ranges, log scales and the wall-time unit. Pure, so
// tests check the choices; plot/plot.cc hands the panels to PLplot.
#pragma once
#include <string>
#include <vector>

#include "jobs/run_curves.h"

namespace hpclaunch {

struct Series {
  std::string label;  // in the legend: the run's name, with the curve's ("a: training") where a panel has several
  int run = 0;        // index of the run
  int colour = 0;     // its colour: the run's index, or the next one for the validation of a lone run
  // line: a solid line; faint: the raw values under their smoothed line (light, not in the legend); points: a
  // dashed line through marked points (validation, a few records)
  enum class Style { line, faint, points } style = Style::line;
  std::vector<double> x, y;  // y NaN: not finite in the file, drawn as a gap
};

struct Panel {
  std::string title, x_label, y_label;
  bool log_y = false;
  double x_min = 0, x_max = 1, y_min = 0, y_max = 1;  // y range in data units (log_y: both > 0)
  std::vector<Series> series;
  std::vector<double> marks;  // x of the steps where a run went non-finite: a vertical line each
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

// TensorBoard's smoothing: an exponential moving average with `weight` (0: none, up to 0.999), debiased at the start
// (the first values are not pulled toward 0); a NaN stays a gap and does not enter the average.
std::vector<double> smooth(const std::vector<double>& y, double weight);

// Six panels, row by row: {loss (training, and validation over it), learning rate, samples/s} x {step, wall time};
// then two more for each further field of a user log (in the order the runs' files name them). Training loss and
// throughput are smoothed with `smoothing` (the raw line kept faint); the learning rate and validation are not.
std::vector<Panel> make_panels(const std::vector<RunCurves>& runs, const std::vector<std::string>& labels,
                               double smoothing = 0.6);

// What `plot` tells about a run beside drawing it: for a user log the fields it drew and those it did not; where
// values were not finite. Empty for a clean hpclaunch-train file.
std::vector<std::string> plot_notes(const RunCurves& m);

}  // namespace hpclaunch
