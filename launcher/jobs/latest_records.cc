#include "jobs/latest_records.h"

#include <fstream>
#include <vector>

#include "jobs/run_curves.h"
#include "util/strings.h"

namespace hpclaunch {

namespace {

// A user log's line ({"step": 120, "loss": 0.03, ...}, no "type") as the step it reports, its fields named as plot
// names them (canonical_field); a log without a loss reads as NaN, and `has_loss` says so.
metrics::Step user_step(const metrics::UserRecord& u, bool* has_loss) {
  metrics::Step s;
  s.step = u.step;
  s.loss = metrics::k_nan;
  *has_loss = false;
  for (const auto& [key, value] : u.values) {
    const std::string field = canonical_field(key);
    if (field == "loss") s.loss = value, *has_loss = true;
    else if (field == "lr") s.lr = value;
    else if (field == "samples_per_s") s.samples_per_s = value;
    else if (field == "epoch") s.epoch = static_cast<int64_t>(value);
  }
  return s;
}

}  // namespace

LatestRecords latest_records(std::string_view tail) {
  LatestRecords out;
  // Only whole lines: the part after the last newline may be mid-write.
  size_t end = tail.rfind('\n');
  if (end == std::string_view::npos) return out;
  std::vector<std::string> lines = split(tail.substr(0, end), '\n');
  bool last = true;
  for (auto it = lines.rbegin(); it != lines.rend() && !(out.step && out.validation); ++it) {
    const std::optional<metrics::Record> record = metrics::parse_line(*it);
    if (!record) continue;
    if (auto* s = std::get_if<metrics::Step>(&*record); s && !out.step) out.step = *s;
    else if (auto* u = std::get_if<metrics::UserRecord>(&*record); u && !out.step)
      out.step = user_step(*u, &out.has_loss);
    else if (auto* v = std::get_if<metrics::Validation>(&*record); v && !out.validation) out.validation = *v;
    else if (auto* e = std::get_if<metrics::RunEnd>(&*record); e && last) out.end = *e;
    last = false;
  }
  return out;
}

std::string read_file_tail(const std::string& path, size_t max_bytes) {
  std::ifstream in(path, std::ios::binary | std::ios::ate);
  if (!in) return {};
  std::streamoff size = in.tellg();
  std::streamoff start = size > static_cast<std::streamoff>(max_bytes) ? size - static_cast<std::streamoff>(max_bytes) : 0;
  in.seekg(start);
  std::string out(static_cast<size_t>(size - start), '\0');
  in.read(out.data(), static_cast<std::streamsize>(out.size()));
  out.resize(static_cast<size_t>(in.gcount()));
  return out;
}

}  // namespace hpclaunch
