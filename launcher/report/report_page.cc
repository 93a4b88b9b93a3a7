// The report as one HTML page: inline CSS, the curves as inline SVG drawn from `plot`'s panels (plot/panels.h), no
// script and no address outside the page but the array's links to its tasks' pages. Every string from a file is
// escaped (html_escape).
#include <fmt/core.h>

#include <algorithm>
#include <charconv>
#include <cmath>

#include "report/report.h"
#include "util/strings.h"

namespace hpclaunch {

namespace {

// `plot`'s colours (PLplot's palette there, matplotlib's tab10), by a series' colour index.
const char* const k_colours[] = {"#1f77b4", "#ff7f0e", "#2ca02c", "#d62728", "#9467bd",
                                 "#8c564b", "#e377c2", "#7f7f7f", "#bcbd22", "#17becf"};

const char* k_style = R"(body{font:14px/1.4 system-ui,sans-serif;margin:24px auto;max-width:1100px;color:#222;padding:0 16px}
h1{font-size:22px;margin:0 0 4px}h2{font-size:17px;border-bottom:1px solid #ddd;padding-bottom:3px;margin-top:28px}
table{border-collapse:collapse;margin:6px 0}td,th{border:1px solid #ddd;padding:3px 8px;text-align:left;vertical-align:top}
th{background:#f4f4f4}pre{background:#f7f7f7;border:1px solid #e4e4e4;padding:8px;overflow-x:auto;font-size:12px;margin:4px 0}
.state{font-weight:600}.ok{color:#1a7f37}.bad{color:#c62828}.note{color:#666}.best{background:#eaf5ea}
.kind{display:inline-block;min-width:70px;font-size:12px;padding:1px 6px;border-radius:3px;background:#eee}
.k-requeue,.k-restart,.k-spare,.k-excluded{background:#fff3cd}.k-failure,.k-hang,.k-lost{background:#fde2e1}
.k-end{background:#e6f4ea}svg{display:block;margin:8px 0}
)";

std::string esc(const std::string& s) { return html_escape(s); }

std::string row(const std::string& key, const std::string& value) {
  return "<tr><th>" + esc(key) + "</th><td>" + esc(value) + "</td></tr>\n";
}

// A coordinate to one decimal, as {:.1f} writes it (but a tie rounds away from zero): a chart's path holds a
// point per step up to 1,280, and a 1,000-task array's pages a few million; fmt's exact rounding took a third of
// writing them (bench/report/RESULTS.md).
void append_tenths(std::string* out, double v) {
  if (!(std::fabs(v) < 1e15)) {
    *out += fmt::format("{:.1f}", v);
    return;
  }
  long long t = std::llround(v * 10);
  char text[24];
  char* end = text;
  if (t < 0) *end++ = '-', t = -t;
  end = std::to_chars(end, text + sizeof text, t / 10).ptr;
  *end++ = '.';
  *end++ = static_cast<char>('0' + t % 10);
  out->append(text, static_cast<size_t>(end - text));
}

// "1 GPU", "4 GPUs".
std::string counted(long long n, const char* word) { return fmt::format("{} {}{}", n, word, n == 1 ? "" : "s"); }

std::string number(double v) {
  if (!std::isfinite(v)) return "-";
  return fmt::format("{:.4g}", v);
}

// Seconds as "1h02m", "3m05s", "12.5s".
std::string duration(double s) {
  if (s >= 3600) return fmt::format("{}h{:02}m", static_cast<long>(s / 3600), static_cast<long>(s / 60) % 60);
  if (s >= 60) return fmt::format("{}m{:02}s", static_cast<long>(s / 60), static_cast<long>(s) % 60);
  return fmt::format("{:.1f}s", s);
}

std::string request_section(const ReportFacts& f) {
  std::string out = "<section id=\"request\"><h2>Request and plan</h2>\n<table>\n";
  out += row("job", f.job_id.empty() ? "(not submitted)" : f.job_id);
  out += row("job directory", f.job_dir);
  out += row("site", f.site + " (" + f.scheduler + ")");
  if (!f.submitted_at.empty()) out += row("submitted", f.submitted_at);
  if (f.snapshot) out += row("snapshot", describe_snapshot(*f.snapshot));
  if (const auto& p = f.plan) {
    out += row("command", join(p->command, " "));
    out += row("nodes", std::to_string(p->nodes));
    out += row("tasks", fmt::format("{} ({} per node, {} each)", p->ntasks, p->ntasks_per_node, counted(p->cpus_per_task, "CPU")));
    out += row("workers", fmt::format("{} ({} per node, {} per node)", p->world_size, p->workers_per_node,
                                      counted(p->gpus_per_node, "GPU")));
    out += row("launcher", to_string(p->launcher));
    out += row("queue", p->partition.empty() ? "(the site's default)" : p->partition + (p->qos.empty() ? "" : ", QOS " + p->qos));
    out += row("account", p->account.empty() ? "(none)" : p->account);
    out += row("time limit", p->time.empty() ? "(none)" : p->time);
    if (p->requeue) out += row("requeue", fmt::format("up to {} times, warned by {}", p->max_requeues, p->warning_signal));
    if (p->preflight) out += row("preflight", "before the run");
    if (p->array.tasks > 0)
      out += row("array", fmt::format("{} tasks ({}), {} at once", p->array.tasks, p->array.mode,
                                      p->array.max_concurrent > 0 ? std::to_string(p->array.max_concurrent) : "all"));
    for (const auto& w : p->warnings) out += row("warning", w);
  } else {
    out += "<tr><td colspan=\"2\" class=\"note\">no plan.json in the job directory: the plan is not recorded</td></tr>\n";
  }
  return out + "</table></section>\n";
}

std::string script_section(const ReportFacts& f) {
  std::string out = "<section id=\"script\"><h2>Script</h2>\n";
  if (f.script.empty()) return out + "<p class=\"note\">no job.sh in the job directory</p></section>\n";
  return out + "<pre>" + esc(f.script) + "</pre></section>\n";
}

std::string timeline_section(const ReportFacts& f) {
  std::string out = "<section id=\"timeline\"><h2>Timeline: runs, restarts, requeues</h2>\n";
  if (f.timeline.empty())
    return out + "<p class=\"note\">nothing recorded yet: no run has written its metrics, and the agents reported "
                 "nothing</p></section>\n";
  out += "<table><tr><th>time</th><th>what</th><th></th></tr>\n";
  for (const auto& ev : f.timeline) {
    std::string cls = ev.kind == "lost node" ? "lost" : ev.kind;
    out += "<tr><td>" + (ev.wall_s ? "+" + duration(*ev.wall_s) : std::string()) + "</td><td><span class=\"kind k-" +
           esc(cls) + "\">" + esc(ev.kind) + "</span></td><td>" + esc(ev.what);
    if (!ev.detail.empty()) out += "<pre>" + esc(ev.detail) + "</pre>";
    out += "</td></tr>\n";
  }
  return out + "</table></section>\n";
}

std::string ranks_section(const ReportFacts& f) {
  std::string out = "<section id=\"ranks\"><h2>Ranks: exit and last lines</h2>\n";
  if (f.output_file.empty()) return out + "<p class=\"note\">no output yet</p></section>\n";
  out += "<p class=\"note\">from " + esc(f.output_file) + "</p>\n";
  if (f.ranks.empty())
    return out + "<p class=\"note\">no line of the output names a rank (the agent's <code>[host:R]</code> or srun -l's "
                 "<code>R:</code> prefix)</p></section>\n";
  out += "<table><tr><th>rank</th><th>exit</th><th>last lines</th></tr>\n";
  for (const auto& r : f.ranks)
    out += fmt::format("<tr><td>{}</td><td>{}</td><td><pre>{}</pre></td></tr>\n", r.rank, esc(r.exit),
                       esc(join(r.last_lines, "\n")));
  return out + "</table></section>\n";
}

// One panel as an SVG chart: axes with their ranges, each series a path broken at its gaps, validation as a dashed
// line with dots, the non-finite marks as red lines.
std::string chart(const Panel& p) {
  const double left = 72, right = 16, top = 26, bottom = 40, h = 250;
  const double pw = static_cast<double>(k_report_curve_columns), w = left + pw + right, ph = h - top - bottom;
  auto fy = [&](double v) { return p.log_y ? std::log10(v) : v; };
  const double y0 = fy(p.y_min), y1 = fy(p.y_max) > fy(p.y_min) ? fy(p.y_max) : fy(p.y_min) + 1;
  const double x0 = p.x_min, x1 = p.x_max > p.x_min ? p.x_max : p.x_min + 1;
  auto px = [&](double x) { return left + (x - x0) / (x1 - x0) * pw; };
  auto py = [&](double y) { return top + ph - (fy(y) - y0) / (y1 - y0) * ph; };
  std::string out = fmt::format(
      "<svg xmlns=\"http://www.w3.org/2000/svg\" width=\"{0}\" height=\"{1}\" viewBox=\"0 0 {0} {1}\" role=\"img\" "
      "aria-label=\"{2}\">\n<text x=\"{3}\" y=\"16\" font-size=\"13\" font-weight=\"600\">{2}</text>\n"
      "<rect x=\"{3}\" y=\"{4}\" width=\"{5}\" height=\"{6}\" fill=\"#fff\" stroke=\"#999\"/>\n",
      w, h, esc(p.title), left, top, pw, ph);
  for (int i = 0; i <= 4; ++i) {  // ticks: five values on each axis
    const double fx = x0 + (x1 - x0) * i / 4, fyv = y0 + (y1 - y0) * i / 4;
    const double yv = p.log_y ? std::pow(10, fyv) : fyv, ty = top + ph - ph * i / 4;
    out += fmt::format("<line x1=\"{0}\" y1=\"{1}\" x2=\"{2}\" y2=\"{1}\" stroke=\"#eee\"/>"
                       "<text x=\"{3}\" y=\"{4}\" font-size=\"11\" text-anchor=\"end\">{5}</text>"
                       "<text x=\"{6}\" y=\"{7}\" font-size=\"11\" text-anchor=\"middle\">{8}</text>\n",
                       left + 1, ty, left + pw - 1, left - 4, ty + 4, fmt::format("{:.3g}", yv), px(fx), top + ph + 14,
                       fmt::format("{:.6g}", std::round(fx)));
  }
  out += fmt::format("<text x=\"{}\" y=\"{}\" font-size=\"12\" text-anchor=\"middle\">{}</text>\n", left + pw / 2,
                     h - 6, esc(p.x_label));
  out += fmt::format("<text transform=\"translate(14 {}) rotate(-90)\" font-size=\"12\" text-anchor=\"middle\">{}{}</text>\n",
                     top + ph / 2, esc(p.y_label), p.log_y ? " (log)" : "");
  for (const auto& raw : p.series) {
    const Series s = thin_series(raw, x0, x1, k_report_curve_columns);
    const char* colour = k_colours[static_cast<size_t>(s.colour) % std::size(k_colours)];
    std::string d;
    bool pen_down = false;
    for (size_t i = 0; i < s.x.size(); ++i) {
      if (!std::isfinite(s.y[i]) || (p.log_y && s.y[i] <= 0)) {
        pen_down = false;
        continue;
      }
      d += pen_down ? " L" : (d.empty() ? "M" : " M");
      append_tenths(&d, px(s.x[i]));
      d += ' ';
      append_tenths(&d, py(s.y[i]));
      pen_down = true;
    }
    if (d.empty()) continue;
    const char* look = s.style == Series::Style::faint    ? "stroke-width=\"1\" stroke-opacity=\"0.25\""
                       : s.style == Series::Style::points ? "stroke-width=\"1.5\" stroke-dasharray=\"5 3\""
                                                          : "stroke-width=\"2.5\"";
    out += fmt::format("<path class=\"series\" data-label=\"{}\" d=\"{}\" fill=\"none\" stroke=\"{}\" {}/>\n",
                       esc(s.label), d, colour, look);
    if (s.style == Series::Style::points && s.x.size() <= 400)
      for (size_t i = 0; i < s.x.size(); ++i)
        if (std::isfinite(s.y[i]) && !(p.log_y && s.y[i] <= 0))
          out += fmt::format("<circle cx=\"{:.1f}\" cy=\"{:.1f}\" r=\"3.5\" fill=\"{}\"/>", px(s.x[i]), py(s.y[i]), colour);
  }
  for (double m : p.marks)
    out += fmt::format("<line x1=\"{0:.1f}\" y1=\"{1}\" x2=\"{0:.1f}\" y2=\"{2}\" stroke=\"#d62728\" stroke-dasharray=\"3 3\"/>\n",
                       px(m), top, top + ph);
  std::string legend;
  double lx = left + 8;
  for (const auto& s : p.series) {
    if (s.style == Series::Style::faint) continue;
    legend += fmt::format("<rect x=\"{:.0f}\" y=\"{}\" width=\"12\" height=\"4\" fill=\"{}\"/><text x=\"{:.0f}\" y=\"{}\" "
                          "font-size=\"11\">{}</text>",
                          lx, top + 8, k_colours[static_cast<size_t>(s.colour) % std::size(k_colours)], lx + 16,
                          top + 13, esc(s.label));
    lx += 24 + 6.5 * static_cast<double>(s.label.size());
  }
  return out + legend + "\n</svg>\n";
}

std::string curves_section(const ReportFacts& f) {
  std::string out = "<section id=\"curves\"><h2>Curves</h2>\n";
  if (!f.curves) return out + "<p class=\"note\">" + esc(f.metrics_note) + "</p></section>\n";
  out += "<p class=\"note\">from " + esc(f.metrics_file) + "; training loss and throughput smoothed as `hpclaunch plot` "
         "smooths them (the raw line faint)</p>\n";
  for (const auto& note : plot_notes(*f.curves)) out += "<p class=\"note\">" + esc(note) + "</p>\n";
  std::vector<Panel> panels = make_panels({*f.curves}, {"run"});
  for (const auto& p : panels)
    if (p.x_label == "step" && !p.empty()) out += chart(p);
  return out + "</section>\n";
}

std::string preflight_section(const ReportFacts& f) {
  std::string out = "<section id=\"preflight\"><h2>Preflight</h2>\n";
  if (!f.preflight) {
    out += "<p class=\"note\">no preflight ran (no preflight.json: submit with --preflight)</p>\n";
  } else {
    const PreflightReport& p = *f.preflight;
    out += fmt::format("<p>verdict: <span class=\"{}\">{}</span> ({} ranks, {})</p>\n", p.ok ? "ok" : "bad",
                       p.ok ? "every node passed" : "bad nodes: " + esc(join(p.bad_nodes, ", ")), p.world_size, esc(p.backend));
    if (!p.busbw_shortfall.empty()) out += "<p class=\"bad\">" + esc(p.busbw_shortfall) + "</p>\n";
    for (const auto& line : p.domain_shortfalls) out += "<p class=\"bad\">" + esc(line) + "</p>\n";
    auto numbers = [](const std::vector<int>& v) {
      std::vector<std::string> out;
      for (int x : v) out.push_back(std::to_string(x));
      return join(out, ",");
    };
    // Where nodes are in NVLink domains, each node's row carries its domain and the busbw measured inside it.
    const bool domains = !p.nvlink_domains.empty() || !p.across_domains.empty();
    out += std::string("<table><tr><th>node</th><th>ranks</th><th>GPUs</th><th>probe (s)</th>") +
           (domains ? "<th>NVLink domain</th><th>busbw inside it (GB/s)</th>" : "") + "<th>problems</th></tr>\n";
    for (const auto& n : p.nodes) {
      std::string domain_cells;
      if (domains) {
        auto inside = std::find_if(p.nvlink_domains.begin(), p.nvlink_domains.end(),
                                   [&](const PreflightGroup& g) { return g.name == n.domain; });
        domain_cells = fmt::format("<td>{}</td><td>{}</td>", n.domain.empty() ? "none" : esc(n.domain),
                                   inside == p.nvlink_domains.end() ? "" : number(inside->busbw_gbs));
      }
      out += fmt::format("<tr><td>{}</td><td>{}</td><td>{}</td><td>{}</td>{}<td class=\"{}\">{}</td></tr>\n", esc(n.node),
                         numbers(n.ranks), n.gpus, number(n.probe_seconds), domain_cells, n.problems.empty() ? "ok" : "bad",
                         n.problems.empty() ? "ok" : esc(join(n.problems, "; ")));
    }
    out += "</table>\n<p>allreduce bandwidth (every node together; per node, the probe time above):</p>\n"
           "<table><tr><th>bytes</th><th>time (s)</th><th>algbw (GB/s)</th><th>busbw (GB/s)</th></tr>\n";
    for (const auto& s : p.allreduce)
      out += fmt::format("<tr><td>{}</td><td>{}</td><td>{}</td><td>{}</td></tr>\n", s.bytes, number(s.seconds),
                         number(s.algbw_gbs), number(s.busbw_gbs));
    out += "</table>\n";
    if (domains) {
      out += "<p>inside each NVLink domain and across domains (rail K: the K-th rank of each domain), each kind's "
             "groups at once:</p>\n<table><tr><th>group</th><th>nodes</th><th>ranks</th><th>bytes</th>"
             "<th>busbw (GB/s)</th></tr>\n";
      for (const auto* kind : {&p.nvlink_domains, &p.across_domains})
        for (const auto& g : *kind)
          out += fmt::format("<tr><td>{}</td><td>{}</td><td>{}</td><td>{}</td><td>{}</td></tr>\n", esc(g.name),
                             esc(join(g.nodes, ", ")), numbers(g.ranks), g.bytes, number(g.busbw_gbs));
      out += fmt::format("</table>\n<p class=\"note\">expected: {} GB/s inside a domain, {} GB/s across (the profile's "
                         "interconnect figures; 0: none given)</p>\n",
                         number(p.expected_nvlink_busbw_gbs), number(p.expected_busbw_gbs));
    }
  }
  out += "<h3>Nodes left out</h3>\n";
  if (f.excluded.empty()) return out + "<p class=\"note\">none</p></section>\n";
  out += "<table><tr><th>node</th><th>why</th><th>from run</th></tr>\n";
  for (const auto& n : f.excluded)
    out += fmt::format("<tr><td>{}</td><td>{}</td><td>{}</td></tr>\n", esc(n.node), esc(n.reason), n.run);
  return out + "</table></section>\n";
}

std::string usage_section(const ReportFacts& f) {
  std::string out = "<section id=\"usage\"><h2>What the scheduler says the job used</h2>\n";
  if (!f.usage.empty()) {
    out += "<table>\n";
    for (const auto& [k, v] : f.usage) out += row(k, v);
    out += "</table>\n";
  }
  if (!f.usage_note.empty()) out += "<p class=\"note\">" + esc(f.usage_note) + "</p>\n";
  return out + "</section>\n";
}

std::string tasks_section(const ReportFacts& f) {
  std::string out = fmt::format("<section id=\"tasks\"><h2>Tasks ({})</h2>\n<table><tr><th>task</th><th>job</th>", f.tasks.size());
  for (const auto& k : f.keys) out += "<th>" + esc(k) + "</th>";
  out += "<th>state</th><th>best validation loss</th><th>at step</th><th>steps</th><th>page</th></tr>\n";
  std::optional<size_t> best;
  for (size_t i = 0; i < f.tasks.size(); ++i)
    if (const auto& b = f.tasks[i].best_validation; b && (!best || b->value < f.tasks[*best].best_validation->value))
      best = i;
  for (size_t i = 0; i < f.tasks.size(); ++i) {
    const TaskFacts& t = f.tasks[i];
    out += fmt::format("<tr{}><td>{}</td><td>{}</td>", best == i ? " class=\"best\"" : "", t.task, esc(t.job_id));
    for (const auto& k : f.keys) {
      std::string value = "-";
      for (const auto& v : t.values)
        if (v.key == k) value = v.value;
      out += "<td>" + esc(value) + "</td>";
    }
    out += fmt::format("<td>{}</td><td>{}</td><td>{}</td><td>{}</td><td><a href=\"{}\">report</a></td></tr>\n",
                       esc(describe(t.state)), t.best_validation ? number(t.best_validation->value) : "-",
                       t.best_validation ? std::to_string(t.best_validation->step) : "-",
                       t.steps >= 0 ? std::to_string(t.steps) : "(no metrics)", esc(t.page));
  }
  return out + "</table></section>\n";
}

}  // namespace

std::string report_html(const ReportFacts& f) {
  std::string out = "<!DOCTYPE html>\n<html lang=\"en\"><head><meta charset=\"utf-8\">\n"
                    "<meta http-equiv=\"Content-Security-Policy\" content=\"default-src 'none'; style-src 'unsafe-inline'; img-src data:\">\n"
                    "<title>hpclaunch report: " + esc(f.job_id) + "</title>\n<style>" + k_style + "</style></head>\n<body>\n";
  const std::string state_class = f.state.succeeded() ? "ok" : f.state.finished() ? "bad" : "";
  out += "<h1>Job " + esc(f.job_id.empty() ? f.job_dir : f.job_id) + ": <span class=\"state " + state_class + "\">" +
         esc(describe(f.state)) + "</span></h1>\n";
  if (!f.state.finished()) out += "<p class=\"note\">the job has not ended: this page shows it as it stands</p>\n";
  out += request_section(f);
  if (f.is_array()) {
    out += tasks_section(f);
  } else {
    out += timeline_section(f) + ranks_section(f) + curves_section(f) + preflight_section(f);
  }
  out += usage_section(f) + script_section(f);
  return out + "</body></html>\n";
}

}  // namespace hpclaunch
