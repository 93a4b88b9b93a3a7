// `hpclaunch plot JOB|METRICS_FILE... [-o out.png|out.svg]`: training and validation loss, learning rate and
// samples/s against step and wall time, one colour per run, drawn by PLplot.
#include <fmt/core.h>

#include <filesystem>

#include "cli/cli_util.h"
#include "jobs/metrics_location.h"
#include "record/job_record.h"
#include "jobs/metrics.h"
#include "plot/panels.h"
#include "plot/plot.h"
#include "submit/job_index.h"
#include "util/error.h"

namespace hpclaunch {

namespace fs = std::filesystem;

int cmd_plot(const Args& args) {
  CLI::App app("Plot training curves from metrics files or jobs (PNG and/or SVG).", "plot");
  std::vector<std::string> refs;
  std::string output, title;
  app.add_option("RUN", refs, "metrics file (hpclaunch-train --metrics, or JSON lines with \"step\"), or job (id or directory); several to compare")
      ->required();
  app.add_option("--output,-o", output, "NAME.png or NAME.svg; default: both, next to the first run's metrics");
  app.add_option("--title", title, "title over the panels; default: the runs' names");
  if (!parse_or_throw(app, args)) return 0;

  std::vector<std::string> paths;
  std::vector<std::string> index;
  bool index_read = false;
  std::error_code ec;
  for (const auto& ref : refs) {
    if (fs::is_regular_file(ref, ec)) {
      paths.push_back(ref);
      continue;
    }
    if (!index_read) index = read_job_index(), index_read = true;
    if (!fs::exists(ref, ec) && ref.find('/') != std::string::npos)
      throw Error(ref, "cannot read the metrics file (missing)", "give a metrics file or a job (`hpclaunch jobs` lists them)");
    JobRecord job = resolve_job(ref, index);
    paths.push_back(metrics_path(job, fs::current_path().string()));
  }
  std::vector<Metrics> runs;
  for (const auto& p : paths) runs.push_back(read_metrics(p));
  for (const auto& run : runs)
    for (const auto& note : plot_notes(run)) fmt::print(stderr, "hpclaunch: note: {}\n", note);

  std::vector<std::pair<std::string, ImageFormat>> outputs;
  if (!output.empty()) {
    outputs.emplace_back(output, image_format_for(output, "--output"));
  } else {
    fs::path base = fs::path(paths.front()).replace_extension();
    outputs.emplace_back(base.string() + ".png", ImageFormat::png);
    outputs.emplace_back(base.string() + ".svg", ImageFormat::svg);
  }
  std::vector<std::string> labels = run_labels(paths);
  if (title.empty()) {
    title = "Training curves: " + labels.front();
    for (size_t i = 1; i < labels.size(); ++i) title += (i + 1 == labels.size() ? " and " : ", ") + labels[i];
  }
  std::vector<Panel> panels = make_panels(runs, labels);
  for (const auto& [path, format] : outputs) {
    draw_panels(panels, title, path, format);
    fmt::print("{}\n", path);
  }
  return 0;
}

}  // namespace hpclaunch
