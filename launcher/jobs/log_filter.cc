#include "jobs/log_filter.h"

#include <cctype>

#include "util/strings.h"

namespace hpclaunch {

namespace {

std::optional<int> parse_rank(std::string_view digits) {
  if (digits.empty() || digits.size() > 9) return std::nullopt;
  int v = 0;
  for (char c : digits) {
    if (!std::isdigit(static_cast<unsigned char>(c))) return std::nullopt;
    v = v * 10 + (c - '0');
  }
  return v;
}

}  // namespace

std::optional<int> line_rank(std::string_view line) {
  if (!line.empty() && line[0] == '[') {
    // mpirun --tag-output: "[JOB,RANK]<stdout>:text" (or <stderr>).
    const size_t tag_end = line.find(']');
    const std::string_view after = tag_end == std::string_view::npos ? "" : line.substr(tag_end + 1);
    if (after.rfind("<stdout>:", 0) == 0 || after.rfind("<stderr>:", 0) == 0) {
      const std::string_view inside = line.substr(1, tag_end - 1);
      const size_t comma = inside.find(',');
      if (comma == std::string_view::npos || !parse_rank(inside.substr(0, comma))) return std::nullopt;
      return parse_rank(inside.substr(comma + 1));
    }
    // The agent's "[host:rank] text".
    size_t close = line.find("] ");
    if (close == std::string_view::npos) close = line.find(']');
    if (close == std::string_view::npos) return std::nullopt;
    std::string_view inside = line.substr(1, close - 1);
    size_t colon = inside.rfind(':');
    if (colon == std::string_view::npos || colon == 0) return std::nullopt;
    return parse_rank(inside.substr(colon + 1));
  }
  // srun --label pads the rank to the width of the largest: " 3: text".
  size_t start = line.find_first_not_of(' ');
  if (start == std::string_view::npos) return std::nullopt;
  size_t colon = line.find(": ", start);
  if (colon == std::string_view::npos) {
    if (!line.empty() && line.back() == ':') colon = line.size() - 1;  // "3:" for an empty line
    else return std::nullopt;
  }
  return parse_rank(line.substr(start, colon - start));
}

bool keep_line(std::string_view line, std::optional<int> rank) {
  if (!rank) return true;
  auto r = line_rank(line);
  return r && *r == *rank;
}

}  // namespace hpclaunch
