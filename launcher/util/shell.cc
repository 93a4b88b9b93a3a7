#include "util/shell.h"

namespace hpclaunch {

std::string shell_quote(std::string_view s) {
  bool plain = !s.empty();
  for (char c : s) {
    bool ok = (c >= 'a' && c <= 'z') || (c >= 'A' && c <= 'Z') || (c >= '0' && c <= '9') ||
              c == '_' || c == '-' || c == '.' || c == '/' || c == ',' || c == ':' || c == '@' ||
              c == '%' || c == '+' || c == '=';
    if (!ok) { plain = false; break; }
  }
  // '=' is only safe when the word cannot be taken for an assignment (no leading NAME=).
  if (plain && s.find('=') != std::string_view::npos) plain = false;
  if (plain) return std::string(s);
  std::string out = "'";
  for (char c : s) {
    if (c == '\'') out += "'\\''";
    else out += c;
  }
  out += '\'';
  return out;
}

std::string shell_join(const std::vector<std::string>& argv) {
  std::string out;
  for (size_t i = 0; i < argv.size(); ++i) {
    if (i) out += ' ';
    out += shell_quote(argv[i]);
  }
  return out;
}

bool is_env_name(std::string_view name) {
  if (name.empty() || (name[0] >= '0' && name[0] <= '9')) return false;
  for (char c : name)
    if (!((c >= 'a' && c <= 'z') || (c >= 'A' && c <= 'Z') || (c >= '0' && c <= '9') || c == '_')) return false;
  return true;
}

}  // namespace hpclaunch
