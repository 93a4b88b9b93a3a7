#include "cli/help_model.h"

#include <cctype>

#include "util/strings.h"

namespace hpclaunch {

namespace {

// CLI11 prints "  NAME OPTS" padded to this column, then the description (on the next line if NAME is longer).
constexpr size_t k_column = 30;

bool starts_with(const std::string& s, const char* prefix) { return s.rfind(prefix, 0) == 0; }

// Splits an entry line into its name field and the description that follows on the same line.
void split_entry_line(const std::string& line, bool next_is_continuation, std::string* field, std::string* text) {
  size_t gap = line.find("  ", 2);
  if (line.size() >= k_column && next_is_continuation && (gap == std::string::npos || gap > k_column)) {
    *field = trim(line);
  } else if (gap != std::string::npos && gap <= k_column) {
    *field = trim(line.substr(0, gap));
    *text = trim(line.substr(gap));
  } else if (line.size() > k_column && line[k_column - 1] == ' ') {
    *field = trim(line.substr(0, k_column));
    *text = trim(line.substr(k_column));
  } else {
    *field = trim(line);
  }
}

// "NAMES [TYPE[=DEFAULT][:CHECK]] [...] [REQUIRED]": CLI11's name field of an option or a positional.
HelpEntry parse_field(const std::string& field, bool positional_section) {
  HelpEntry e;
  std::vector<std::string> words = split(field, ' ');
  e.positional = positional_section || words[0][0] != '-';
  e.names = e.positional ? std::vector<std::string>{words[0]} : split(words[0], ',');
  std::vector<std::string> value;
  for (size_t i = 1; i < words.size(); ++i) {
    if (words[i] == "...") e.repeatable = true;
    else if (words[i] != "REQUIRED" && !words[i].empty()) value.push_back(words[i]);
  }
  if (!value.empty() && std::isupper(static_cast<unsigned char>(value[0][0]))) e.value = join(value, " ");
  return e;
}

}  // namespace

HelpModel parse_help(const std::string& text) {
  HelpModel h;
  std::vector<std::string> lines = split(text, '\n');
  enum { description, lists, notes } where = description;
  bool positional_section = false;
  for (size_t i = 0; i < lines.size(); ++i) {
    const std::string& line = lines[i];
    if (where == description) {
      if (starts_with(line, "Usage: ")) {
        // "Usage: NAME [OPTIONS] ...", NAME being "submit" or "hpclaunch agent".
        std::string rest = line.substr(7);
        if (starts_with(rest, "hpclaunch ")) rest = rest.substr(10);
        size_t space = rest.find(' ');
        h.usage = space == std::string::npos ? std::string() : std::string(trim(rest.substr(space)));
        where = lists;
      } else if (!trim(line).empty()) {
        h.description += (h.description.empty() ? "" : " ") + std::string(trim(line));
      }
      continue;
    }
    if (where == lists && !line.empty() && line[0] != ' ' && line.back() == ':') {
      positional_section = starts_with(line, "Positionals");
      continue;
    }
    if (where == lists && starts_with(line, "  ") && line.size() > 2 && line[2] != ' ') {
      bool next_cont = i + 1 < lines.size() && starts_with(lines[i + 1], "   ");
      std::string field, desc;
      split_entry_line(line, next_cont, &field, &desc);
      HelpEntry e = parse_field(field, positional_section);
      e.text = desc;
      h.entries.push_back(e);
      continue;
    }
    if (where == lists && starts_with(line, "   ") && !h.entries.empty()) {
      std::string& t = h.entries.back().text;
      t += (t.empty() ? "" : " ") + std::string(trim(line));
      continue;
    }
    if (trim(line).empty()) continue;
    where = notes;
    h.notes += (h.notes.empty() ? "" : "\n") + line;
  }
  return h;
}

const HelpEntry* find_entry(const HelpModel& help, const std::string& name) {
  for (const auto& e : help.entries)
    for (const auto& n : e.names)
      if (n == name) return &e;
  return nullptr;
}

}  // namespace hpclaunch
