// The metrics file, written and truncated on resume: see metrics_writer.h.
#include "metrics_writer.h"

#include <algorithm>
#include <cerrno>
#include <cstring>
#include <filesystem>
#include <optional>
#include <system_error>
#include <vector>

#include "atomic_file.h"
#include "util/error.h"
#include "util/file.h"

namespace hpctrain {
namespace {

// The "step" of a record (metrics/records.h); -1 for a line that is no JSON object or has no step.
int64_t step_of(const std::string& line) {
  const auto record = hpclaunch::metrics::parse_line(line);
  if (!record) return -1;
  return hpclaunch::metrics::step_of(*record).value_or(-1);
}

// Lines in `text`, an unterminated last one included.
int line_count(const std::string& text) {
  const auto newlines = std::count(text.begin(), text.end(), '\n');
  return static_cast<int>(newlines) + (text.empty() || text.back() == '\n' ? 0 : 1);
}

}  // namespace

MetricsWriter::MetricsWriter(const std::string& path) {
  if (path.empty()) return;
  std::error_code ec;
  auto parent = std::filesystem::path(path).parent_path();
  if (!parent.empty()) std::filesystem::create_directories(parent, ec);  // fopen below reports what failed
  m_file = std::fopen(path.c_str(), "a");
  if (m_file == nullptr)
    throw hpclaunch::Error("--metrics", "cannot open " + path + " for writing: " + std::strerror(errno),
                           "check the path and its permissions");
}

MetricsWriter::~MetricsWriter() {
  if (m_file) std::fclose(m_file);
}

void MetricsWriter::write(const hpclaunch::metrics::Record& record) {
  if (!m_file) return;
  std::fputs(hpclaunch::metrics::to_line(record).c_str(), m_file);
  std::fflush(m_file);
}

std::string metrics_up_to(const std::string& text, int64_t step) {
  std::string kept;
  size_t begin = 0;
  while (begin < text.size()) {
    const size_t newline = text.find('\n', begin);
    if (newline == std::string::npos) break;  // cut off by a kill: not a record
    const std::string line = text.substr(begin, newline - begin);
    if (step_of(line) <= step) kept += line + "\n";
    begin = newline + 1;
  }
  return kept;
}

int truncate_metrics_file(const std::string& path, int64_t step) {
  const std::optional<std::string> text = hpclaunch::read_file(path);
  if (!text) return 0;
  const std::string kept = metrics_up_to(*text, step);
  if (kept.size() == text->size()) return 0;
  write_file_atomically(path, std::vector<char>(kept.begin(), kept.end()),
                        {"the metrics file, cut back to the checkpoint's step", "check the --metrics file's folder"});
  return line_count(*text) - line_count(kept);
}

}  // namespace hpctrain
