#include "plot/plot.h"

#include <plplot.h>

#include <cerrno>
#include <cmath>
#include <cstdio>
#include <cstring>
#include <filesystem>

#include "util/error.h"
#include "util/strings.h"

namespace hpclaunch {

namespace {

// cmap0 entries: 0 background, 1 axes and text, 2 grid, 3 non-finite marks, 4.. one per run (Tableau 10, readable on
// white), then the same colours faint (a quarter opaque) for the raw values under a smoothed line.
constexpr int k_background = 0, k_ink = 1, k_grid = 2, k_mark = 3, k_first_run = 4;
constexpr unsigned char k_run_colours[][3] = {{31, 119, 180}, {255, 127, 14}, {44, 160, 44},  {214, 39, 40},
                                              {148, 103, 189}, {140, 86, 75}, {227, 119, 194}, {127, 127, 127},
                                              {188, 189, 34}, {23, 190, 207}};
constexpr int k_run_count = sizeof k_run_colours / sizeof k_run_colours[0];
constexpr int k_first_faint = k_first_run + k_run_count;
constexpr int k_width = 1600, k_row_height = 500;  // 3 rows: 1600 x 1500; a user log's extra fields add rows

// PLplot reads '#' as the start of an escape sequence.
std::string escape(const std::string& s) { return replace_all(s, "#", "##"); }

void set_palette() {
  plscmap0n(k_first_faint + k_run_count);
  plscol0(k_background, 255, 255, 255);
  plscol0(k_ink, 30, 30, 30);
  plscol0(k_grid, 215, 215, 215);
  plscol0(k_mark, 200, 0, 0);
  for (int i = 0; i < k_run_count; ++i) {
    plscol0(k_first_run + i, k_run_colours[i][0], k_run_colours[i][1], k_run_colours[i][2]);
    plscol0a(k_first_faint + i, k_run_colours[i][0], k_run_colours[i][1], k_run_colours[i][2], 0.25);
  }
}

double y_value(const Panel& p, double y) { return p.log_y ? std::log10(std::max(y, 1e-300)) : y; }

// One line per finite stretch: a value that was not finite (NaN) leaves a gap.
void draw_series(const Panel& p, const Series& s) {
  const bool faint = s.style == Series::Style::faint, points = s.style == Series::Style::points;
  plcol0((faint ? k_first_faint : k_first_run) + s.colour % k_run_count);
  plwidth(faint ? 1.0 : 2.0);
  if (points) pllsty(2);
  std::vector<PLFLT> x, y;
  auto flush = [&] {
    if (x.size() > 1) plline(static_cast<PLINT>(x.size()), x.data(), y.data());
    else if (x.size() == 1) plpoin(1, x.data(), y.data(), 17);  // a point alone between gaps
    x.clear();
    y.clear();
  };
  for (size_t i = 0; i < s.x.size(); ++i) {
    if (!std::isfinite(s.y[i])) {
      flush();
      continue;
    }
    x.push_back(s.x[i]);
    y.push_back(y_value(p, s.y[i]));
  }
  const bool few = !faint && (points || s.x.size() <= 40);
  if (few) {  // few points (validation): mark them
    std::vector<PLFLT> fx, fy;
    for (size_t i = 0; i < s.x.size(); ++i)
      if (std::isfinite(s.y[i])) fx.push_back(s.x[i]), fy.push_back(y_value(p, s.y[i]));
    if (points) plssym(0, 1.8);  // validation's few points, large enough to see on the loss curve
    if (!fx.empty()) plpoin(static_cast<PLINT>(fx.size()), fx.data(), fy.data(), 17);
    plssym(0, 1);
  }
  flush();
  plwidth(1.0);
  pllsty(1);
}

// A dashed red line at each step where a run went non-finite, labelled once.
void draw_marks(const Panel& p) {
  if (p.marks.empty()) return;
  const double y0 = y_value(p, p.y_min), y1 = y_value(p, p.y_max);
  plcol0(k_mark);
  pllsty(2);
  for (double x : p.marks) {
    PLFLT xs[2] = {x, x}, ys[2] = {y0, y1};
    plline(2, xs, ys);
  }
  pllsty(1);
  plptex(p.marks.front(), y1 - (y1 - y0) * 0.06, 1, 0, 1.05, "non-finite");
}

void draw_legend(const Panel& p) {
  std::vector<std::string> texts;
  std::vector<PLINT> opts, colours, styles, text_colours, sym_numbers;
  std::vector<PLFLT> widths, sym_scales;
  std::vector<const char*> text_ptrs, symbols;
  for (const auto& s : p.series) {
    if (s.style == Series::Style::faint) continue;  // the raw line under its smoothed one
    texts.push_back(escape(s.label));
    opts.push_back(PL_LEGEND_LINE);
    colours.push_back(k_first_run + s.colour % k_run_count);
    styles.push_back(s.style == Series::Style::points ? 2 : 1);
    widths.push_back(2.0);
    text_colours.push_back(k_ink);
    sym_numbers.push_back(0);
    sym_scales.push_back(1.0);
    symbols.push_back("");
  }
  for (const auto& t : texts) text_ptrs.push_back(t.c_str());
  PLFLT w = 0, h = 0;
  pllegend(&w, &h, PL_LEGEND_BACKGROUND | PL_LEGEND_BOUNDING_BOX, PL_POSITION_TOP | PL_POSITION_RIGHT | PL_POSITION_INSIDE,
           0.02, 0.03, 0.06, k_background, k_grid, 1, 0, 0, static_cast<PLINT>(texts.size()), opts.data(), 0.6, 0.55,
           2.2, 1.0, text_colours.data(), text_ptrs.data(), nullptr, nullptr, nullptr, nullptr, colours.data(),
           styles.data(), widths.data(), nullptr, nullptr, nullptr, nullptr);
}

// Panel `i` of `count` in two columns, below a title band, in normalized page coordinates.
void set_viewport(size_t i, size_t count) {
  const size_t rows = (count + 1) / 2;
  const double top = 0.955, bottom = 0.0, cell_h = (top - bottom) / static_cast<double>(rows);
  const double col = static_cast<double>(i % 2), row = static_cast<double>(i / 2);
  const double y1 = top - row * cell_h, y0 = y1 - cell_h;
  plvpor(0.09 + col * 0.5, 0.475 + col * 0.5, y0 + cell_h * 0.24, y1 - cell_h * 0.12);
}

void draw_panel(const Panel& p, size_t i, size_t count, bool legend) {
  set_viewport(i, count);
  plwind(p.x_min, p.x_max, y_value(p, p.y_min), y_value(p, p.y_max));
  plcol0(k_grid);
  plbox("g", 0, 0, p.log_y ? "gl" : "g", 0, 0);
  plcol0(k_ink);
  plbox("bcnst", 0, 0, p.log_y ? "bcnstvl" : "bcnstv", 0, 0);
  pllab(escape(p.x_label).c_str(), escape(p.y_label).c_str(), escape(p.title).c_str());
  if (p.empty()) {
    plptex((p.x_min + p.x_max) / 2, (y_value(p, p.y_min) + y_value(p, p.y_max)) / 2, 1, 0, 0.5, "no records");
    return;
  }
  for (const auto& s : p.series) draw_series(p, s);
  draw_marks(p);
  if (legend) draw_legend(p);
}

}  // namespace

ImageFormat image_format_for(const std::string& path, const std::string& where) {
  const std::string ext = ascii_lower(std::filesystem::path(path).extension().string());
  if (ext == ".png") return ImageFormat::png;
  if (ext == ".svg") return ImageFormat::svg;
  throw Error(where, "'" + path + "' has neither a .png nor a .svg extension", "name the output file NAME.png or NAME.svg");
}

void draw_panels(const std::vector<Panel>& panels, const std::string& title, const std::string& path,
                 ImageFormat format) {
  // PLplot exits the process on a file it cannot open: find out first, and say so as hpclaunch does.
  if (std::FILE* f = std::fopen(path.c_str(), "wb")) std::fclose(f);
  else throw failure(path, std::string("cannot write the plot: ") + std::strerror(errno), "check the directory and its permissions");

  plsdev(format == ImageFormat::png ? "pngcairo" : "svgcairo");
  plsfnam(path.c_str());
  plspage(0, 0, k_width, k_row_height * static_cast<int>((panels.size() + 1) / 2), 0, 0);
  set_palette();
  plinit();
  pladv(0);
  plschr(0, 0.55);
  for (size_t i = 0; i < panels.size(); ++i) {
    size_t named = 0;  // series in the legend: more than one, and the first panel only
    for (const auto& s : panels[i].series) named += s.style != Series::Style::faint;
    draw_panel(panels[i], i, panels.size(), i == 0 && named > 1);
  }
  // The title over the whole page.
  plvpor(0, 1, 0, 1);
  plwind(0, 1, 0, 1);
  plcol0(k_ink);
  plschr(0, 0.9);
  plptex(0.5, 0.978, 1, 0, 0.5, escape(title).c_str());
  plend();
}

}  // namespace hpclaunch
