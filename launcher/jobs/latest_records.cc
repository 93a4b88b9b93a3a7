#include "jobs/latest_records.h"

#include <fstream>
#include <vector>

#include "util/strings.h"

namespace hpclaunch {

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
