#include "plot/sweep_table.h"

#include <fmt/core.h>

#include <algorithm>
#include <cmath>

namespace hpclaunch {

std::optional<Point> best_validation(const RunCurves& m) {
  const Curve* c = m.curve("val_loss");
  std::optional<Point> best;
  if (c)
    for (const auto& p : c->points)
      if (std::isfinite(p.value) && (!best || p.value < best->value)) best = p;
  return best;
}

std::string best_validation_table(const std::vector<std::string>& keys, const std::vector<TaskResult>& tasks) {
  std::vector<std::string> header = {"TASK"};
  header.insert(header.end(), keys.begin(), keys.end());
  header.insert(header.end(), {"BEST VAL LOSS", "AT STEP", "LAST LOSS", "STEPS"});
  std::vector<std::vector<std::string>> rows = {header};
  std::optional<size_t> best_row;
  double best = 0;
  for (const auto& t : tasks) {
    std::vector<std::string> row = {std::to_string(t.task)};
    for (const auto& key : keys) {
      auto it = std::find_if(t.values.begin(), t.values.end(), [&](const auto& kv) { return kv.first == key; });
      row.push_back(it == t.values.end() ? "-" : it->second);
    }
    auto v = t.curves ? best_validation(*t.curves) : std::nullopt;
    row.push_back(v ? fmt::format("{:.6g}", v->value) : "-");
    row.push_back(v ? std::to_string(v->step) : "-");
    const Curve* loss = t.curves ? t.curves->curve("loss") : nullptr;
    const bool stepped = loss && !loss->points.empty();
    row.push_back(stepped ? fmt::format("{:.6g}", loss->points.back().value) : "-");
    row.push_back(stepped ? std::to_string(loss->points.back().step) : t.curves ? "0" : "(no metrics)");
    if (v && (!best_row || v->value < best)) best_row = rows.size(), best = v->value;
    rows.push_back(row);
  }
  std::vector<size_t> width(header.size(), 0);
  for (const auto& row : rows)
    for (size_t c = 0; c < row.size(); ++c) width[c] = std::max(width[c], row[c].size());
  std::string out;
  for (size_t r = 0; r < rows.size(); ++r) {
    std::string line;
    for (size_t c = 0; c < rows[r].size(); ++c) line += fmt::format("{:<{}}  ", rows[r][c], width[c]);
    if (best_row && r == *best_row) line += "<- best";
    while (!line.empty() && line.back() == ' ') line.pop_back();
    out += line + "\n";
  }
  return out;
}

}  // namespace hpclaunch
