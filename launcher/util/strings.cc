#include "util/strings.h"

#include <algorithm>
#include <charconv>
#include <numeric>

namespace hpclaunch {

std::vector<std::string> split(std::string_view s, char sep) {
  std::vector<std::string> out;
  size_t start = 0;
  for (;;) {
    size_t pos = s.find(sep, start);
    out.emplace_back(s.substr(start, pos - start));
    if (pos == std::string_view::npos) return out;
    start = pos + 1;
  }
}

bool contains_any(std::string_view s, const std::vector<std::string>& needles) {
  for (const auto& n : needles)
    if (s.find(n) != std::string_view::npos) return true;
  return false;
}

std::vector<std::string> split_escaped(std::string_view s, char sep) {
  std::vector<std::string> out;
  std::string item;
  for (size_t i = 0; i < s.size(); ++i) {
    if (s[i] != sep) {
      item += s[i];
    } else if (i + 1 < s.size() && s[i + 1] == sep) {
      item += sep;
      ++i;
    } else {
      if (!item.empty()) out.push_back(item);
      item.clear();
    }
  }
  if (!item.empty()) out.push_back(item);
  return out;
}

std::string join(const std::vector<std::string>& parts, std::string_view sep) {
  std::string out;
  for (size_t i = 0; i < parts.size(); ++i) {
    if (i) out += sep;
    out += parts[i];
  }
  return out;
}

std::string join_or(const std::vector<std::string>& parts) {
  if (parts.size() < 2) return join(parts, "");
  return join({parts.begin(), parts.end() - 1}, ", ") + " or " + parts.back();
}

std::string ascii_lower(std::string_view s) {
  std::string out(s);
  for (char& c : out)
    if (c >= 'A' && c <= 'Z') c = static_cast<char>(c - 'A' + 'a');
  return out;
}

std::string_view trim(std::string_view s) {
  const char* ws = " \t\r\n";
  size_t b = s.find_first_not_of(ws);
  if (b == std::string_view::npos) return {};
  size_t e = s.find_last_not_of(ws);
  return s.substr(b, e - b + 1);
}

std::string replace_all(std::string s, std::string_view from, std::string_view to) {
  if (from.empty()) return s;
  for (size_t pos = 0; (pos = s.find(from, pos)) != std::string::npos; pos += to.size()) s.replace(pos, from.size(), to);
  return s;
}

bool parse_int(std::string_view s, long long* out) {
  if (s.empty()) return false;
  if (s.front() == '+') s.remove_prefix(1);
  auto [ptr, ec] = std::from_chars(s.data(), s.data() + s.size(), *out);
  return ec == std::errc() && ptr == s.data() + s.size();
}

std::optional<std::pair<int, int>> parse_release(std::string_view s) {
  const std::vector<std::string> parts = split(s, '.');
  if (parts.size() != 2 && parts.size() != 3) return std::nullopt;
  long long n[3] = {0, 0, 0};
  for (size_t i = 0; i < parts.size(); ++i)
    if (parts[i].empty() || parts[i].find_first_not_of("0123456789") != std::string::npos || !parse_int(parts[i], &n[i]) ||
        n[i] > 1000000)
      return std::nullopt;
  return std::make_pair(static_cast<int>(n[0]), static_cast<int>(n[1]));
}

size_t edit_distance(std::string_view a, std::string_view b) {
  std::vector<size_t> row(b.size() + 1);
  std::iota(row.begin(), row.end(), 0);
  for (size_t i = 1; i <= a.size(); ++i) {
    size_t diag = row[0];
    row[0] = i;
    for (size_t j = 1; j <= b.size(); ++j) {
      size_t up = row[j];
      row[j] = std::min({row[j] + 1, row[j - 1] + 1, diag + (a[i - 1] == b[j - 1] ? 0 : 1)});
      diag = up;
    }
  }
  return row[b.size()];
}

std::optional<std::string> closest_match(std::string_view word, const std::vector<std::string>& candidates) {
  // Like ninja's SpellcheckString: allow about a third of the word to be wrong, at least one edit.
  size_t limit = std::max<size_t>(1, (word.size() + 2) / 3);
  std::optional<std::string> best;
  size_t best_d = limit + 1;
  for (const auto& c : candidates) {
    size_t d = edit_distance(word, c);
    bool prefix = c.size() > word.size() && c.compare(0, word.size(), word) == 0 && word.size() >= 3;
    if (prefix) d = std::min(d, limit);
    if (d < best_d) best_d = d, best = c;
  }
  return best;
}

std::string did_you_mean(std::string_view word, const std::vector<std::string>& candidates) {
  auto m = closest_match(word, candidates);
  return m ? " (did you mean '" + *m + "'?)" : std::string();
}

namespace {
size_t display_width(std::string_view s) {
  return static_cast<size_t>(std::count_if(s.begin(), s.end(), [](char c) { return (static_cast<unsigned char>(c) & 0xC0) != 0x80; }));
}
}  // namespace

std::string format_table(const std::vector<std::vector<std::string>>& rows) {
  std::vector<size_t> widths;
  for (const auto& row : rows)
    for (size_t i = 0; i + 1 < row.size(); ++i) {
      if (widths.size() <= i) widths.resize(i + 1, 0);
      widths[i] = std::max(widths[i], display_width(row[i]));
    }
  std::string out;
  for (const auto& row : rows) {
    std::string line;
    for (size_t i = 0; i < row.size(); ++i) {
      line += row[i];
      if (i + 1 < row.size()) line.append(widths[i] - display_width(row[i]) + 2, ' ');
    }
    line.erase(line.find_last_not_of(' ') + 1);
    out += line + "\n";
  }
  return out;
}

}  // namespace hpclaunch
