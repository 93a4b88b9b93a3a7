// `hpclaunch plot JOB|METRICS_FILE... [-o out.png|out.svg]`: training and validation loss, learning rate and
// samples/s against step and wall time, one colour per run, drawn by PLplot. An array job is every task's run,
// named by its values in the legend, with a table of each task's best validation loss.
#include <fmt/core.h>

#include <algorithm>
#include <filesystem>
#include <optional>

#include "cli/cli_util.h"
#include "jobs/metrics_location.h"
#include "record/job_record.h"
#include "jobs/run_curves.h"
#include "plot/panels.h"
#include "plot/plot.h"
#include "plot/sweep_table.h"
#include "submit/job_index.h"
#include "util/error.h"

namespace hpclaunch {

namespace fs = std::filesystem;

namespace {

// An array job's tasks among the runs: each task, and the index of its run (none: no metrics file yet).
struct ArrayRuns {
  std::string job_id, title;
  std::vector<std::string> keys;
  std::vector<std::pair<JobRecord, std::optional<size_t>>> tasks;
};

// Adds the metrics file of every task of `array` that has one to `paths`, its values to `names` (after its job id
// when several jobs are plotted); says which tasks have none yet, and fails when none has.
ArrayRuns array_runs(const JobRecord& array, const std::string& cwd, bool with_id, std::vector<std::string>* paths,
                     std::vector<std::string>* names) {
  ArrayRuns a;
  a.job_id = array.job_id;
  a.title = fmt::format("{} ({} tasks)", array.job_name, array.array_tasks);
  std::error_code ec;
  for (int i = 0; i < array.array_tasks; ++i) {
    JobRecord task = task_record(array, i);
    if (i == 0)
      for (const auto& v : task.values) a.keys.push_back(v.key);
    std::string path = metrics_path(task, cwd);
    if (!fs::is_regular_file(path, ec)) {
      fmt::print(stderr, "hpclaunch: task {} ({}) has no metrics yet: {}\n", task.job_id, task_label(task), path);
      a.tasks.emplace_back(task, std::nullopt);
      continue;
    }
    a.tasks.emplace_back(task, paths->size());
    paths->push_back(path);
    names->push_back(with_id ? task.job_id + " " + task_label(task) : task_label(task));
  }
  if (std::none_of(a.tasks.begin(), a.tasks.end(), [](const auto& t) { return t.second.has_value(); }))
    throw Error(array.job_id, "no task of the array has written metrics yet",
                "plot it once its tasks run (`hpclaunch status " + array.job_id + "`)");
  return a;
}

}  // namespace

int cmd_plot(const Args& args) {
  CLI::App app("Plot training curves from metrics files or jobs (PNG and/or SVG).", "plot");
  std::vector<std::string> refs;
  std::string output, title;
  app.add_option("RUN", refs, "metrics file (hpclaunch-train --metrics, or JSON lines with \"step\"), or job (id or "
                 "directory; an array: all its tasks); several to compare")
      ->required();
  app.add_option("--output,-o", output, "NAME.png or NAME.svg; default: both, next to the first run's metrics");
  app.add_option("--title", title, "title over the panels; default: the runs' names");
  double smoothing = 0.6;
  app.add_option("--smooth", smoothing,
                 "TensorBoard's smoothing of the training loss and throughput: an EMA weight, 0 (none) to 0.999; the "
                 "raw line stays faint")
      ->capture_default_str()
      ->check(CLI::Range(0.0, 0.999));
  if (!parse_or_throw(app, args)) return 0;

  std::vector<std::string> paths, names;  // names: the legend's, where run_labels should not guess ("")
  std::vector<ArrayRuns> arrays;
  std::vector<std::string> index;
  bool index_read = false;
  std::error_code ec;
  const std::string cwd = fs::current_path().string();
  for (const auto& ref : refs) {
    if (fs::is_regular_file(ref, ec)) {
      paths.push_back(ref);
      names.emplace_back();
      continue;
    }
    if (!index_read) index = read_job_index(), index_read = true;
    if (!fs::exists(ref, ec) && ref.find('/') != std::string::npos)
      throw Error(ref, "cannot read the metrics file (missing)", "give a metrics file or a job (`hpclaunch jobs` lists them)");
    JobRecord job = resolve_job(ref, index);
    if (job.is_array()) {
      arrays.push_back(array_runs(job, cwd, refs.size() > 1, &paths, &names));
      continue;
    }
    paths.push_back(metrics_path(job, cwd));
    names.emplace_back();
  }
  std::vector<RunCurves> runs;
  for (const auto& p : paths) runs.push_back(read_run_curves(p));
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
  for (size_t i = 0; i < labels.size(); ++i)
    if (!names[i].empty()) labels[i] = names[i];
  if (title.empty() && refs.size() == 1 && arrays.size() == 1) title = "Training curves: " + arrays.front().title;
  if (title.empty()) {
    title = "Training curves: " + labels.front();
    for (size_t i = 1; i < labels.size(); ++i) title += (i + 1 == labels.size() ? " and " : ", ") + labels[i];
  }
  std::vector<Panel> panels = make_panels(runs, labels, smoothing);
  for (const auto& a : arrays) {  // the best validation loss of each task, before the files
    std::vector<TaskResult> results;
    for (const auto& [task, run] : a.tasks) {
      TaskResult r{*task.task, {}, std::nullopt};
      for (const auto& v : task.values) r.values.emplace_back(v.key, v.value);
      if (run) r.curves = runs[*run];
      results.push_back(r);
    }
    fmt::print("{}: best validation loss of each task\n{}", a.job_id, best_validation_table(a.keys, results));
  }
  for (const auto& [path, format] : outputs) {
    draw_panels(panels, title, path, format);
    fmt::print("{}\n", path);
  }
  return 0;
}

}  // namespace hpclaunch
