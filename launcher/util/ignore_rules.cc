#include "util/ignore_rules.h"

#include "util/strings.h"

namespace hpclaunch {

namespace {

// `[...]` at p[0] == '[' against c: sets *len to the class's length; false when it does not match (or is
// unterminated, then it matches a literal '[': *len 1 and the result c == '[').
bool class_match(std::string_view p, char c, size_t* len) {
  size_t i = 1;
  bool negate = i < p.size() && (p[i] == '!' || p[i] == '^');
  if (negate) ++i;
  bool found = false;
  size_t first = i;
  for (; i < p.size() && (p[i] != ']' || i == first); ++i) {
    if (i + 2 < p.size() && p[i + 1] == '-' && p[i + 2] != ']') {
      found = found || (c >= p[i] && c <= p[i + 2]);
      i += 2;
    } else {
      found = found || p[i] == c;
    }
  }
  if (i >= p.size()) {
    *len = 1;
    return c == '[';
  }
  *len = i + 1;
  return found != negate && c != '/';
}

}  // namespace

bool glob_match(std::string_view p, std::string_view s) {
  // `**` as a whole segment: "**/" any folders (none too), "/**" everything below, "/**/" one or more '/'.
  if (p.substr(0, 3) == "**/") {
    for (size_t i = 0; i <= s.size(); ++i)
      if ((i == 0 || s[i - 1] == '/') && glob_match(p.substr(3), s.substr(i))) return true;
    return false;
  }
  if (p == "**") return true;
  size_t pi = 0, si = 0;
  while (pi < p.size()) {
    char c = p[pi];
    if (c == '/' && p.substr(pi, 4) == "/**/") {
      if (si >= s.size() || s[si] != '/') return false;
      for (size_t i = si; i < s.size(); ++i)
        if (s[i] == '/' && glob_match(p.substr(pi + 4), s.substr(i + 1))) return true;
      return false;
    }
    if (c == '/' && p.substr(pi) == "/**") return si < s.size() && s[si] == '/';
    if (c == '*') {
      while (pi < p.size() && p[pi] == '*') ++pi;
      for (size_t i = si;; ++i) {
        if (glob_match(p.substr(pi), s.substr(i))) return true;
        if (i >= s.size() || s[i] == '/') return false;
      }
    }
    if (si >= s.size()) return false;
    if (c == '?') {
      if (s[si] == '/') return false;
    } else if (c == '[') {
      size_t len = 0;
      if (!class_match(p.substr(pi), s[si], &len)) return false;
      pi += len;
      ++si;
      continue;
    } else if (c == '\\' && pi + 1 < p.size()) {
      if (p[++pi] != s[si]) return false;
    } else if (c != s[si]) {
      return false;
    }
    ++pi;
    ++si;
  }
  return si == s.size();
}

void IgnoreRules::add_file(const std::string& base, std::string_view text) {
  for (const auto& line : split(text, '\n')) add_line(base, line);
}

void IgnoreRules::add_line(const std::string& base, std::string_view line) {
  if (!line.empty() && line.back() == '\r') line.remove_suffix(1);
  // Trailing spaces go, unless the last is escaped ("a\ ").
  while (!line.empty() && line.back() == ' ' && !(line.size() >= 2 && line[line.size() - 2] == '\\'))
    line.remove_suffix(1);
  if (line.empty() || line[0] == '#') return;
  Rule r;
  r.base = base;
  if (line[0] == '!') {
    r.negated = true;
    line.remove_prefix(1);
  } else if (line[0] == '\\' && line.size() > 1 && (line[1] == '!' || line[1] == '#')) {
    line.remove_prefix(1);
  }
  if (!line.empty() && line.back() == '/') {
    r.dir_only = true;
    line.remove_suffix(1);
  }
  r.anchored = line.find('/') != std::string_view::npos;
  if (!line.empty() && line[0] == '/') line.remove_prefix(1);
  if (line.empty()) return;
  r.pattern = std::string(line);
  m_rules.push_back(std::move(r));
}

bool IgnoreRules::ignored(std::string_view path, bool is_dir) const {
  const size_t slash = path.rfind('/');
  const std::string_view name = slash == std::string_view::npos ? path : path.substr(slash + 1);
  for (auto it = m_rules.rbegin(); it != m_rules.rend(); ++it) {
    const Rule& r = *it;
    if (r.dir_only && !is_dir) continue;
    std::string_view under = path;
    if (!r.base.empty()) {
      if (path.size() <= r.base.size() || path.substr(0, r.base.size()) != r.base || path[r.base.size()] != '/')
        continue;
      under = path.substr(r.base.size() + 1);
    }
    if (glob_match(r.pattern, r.anchored ? under : name)) return !r.negated;
  }
  return false;
}

bool IgnoreRules::ignored_with_parents(std::string_view path) const {
  for (size_t i = path.find('/'); i != std::string_view::npos; i = path.find('/', i + 1))
    if (ignored(path.substr(0, i), true)) return true;
  return ignored(path, false);
}

}  // namespace hpclaunch
