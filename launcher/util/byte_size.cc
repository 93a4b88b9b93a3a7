#include "util/byte_size.h"

#include <fmt/core.h>

#include <cmath>

#include "util/strings.h"

namespace hpclaunch {

std::optional<std::uint64_t> parse_byte_size(std::string_view text) {
  std::string t = ascii_lower(trim(text));
  size_t digits = 0;
  while (digits < t.size() && ((t[digits] >= '0' && t[digits] <= '9') || t[digits] == '.')) ++digits;
  if (digits == 0) return std::nullopt;
  std::string number = t.substr(0, digits), unit = std::string(trim(t.substr(digits)));
  if (number.find('.') != number.rfind('.') || number == ".") return std::nullopt;
  static const std::string k_letters = "kmgt";
  int power = 0;
  if (!unit.empty() && unit != "b") {
    size_t at = k_letters.find(unit[0]);
    if (at == std::string::npos) return std::nullopt;
    std::string_view rest = std::string_view(unit).substr(1);
    if (!rest.empty() && rest != "b" && rest != "ib") return std::nullopt;
    power = static_cast<int>(at) + 1;
  }
  double value = std::stod(number) * std::pow(1024.0, power);
  if (!(value < 1.8e19)) return std::nullopt;
  return static_cast<std::uint64_t>(value + 0.5);
}

std::string format_bytes(std::uint64_t bytes) {
  static const char* k_units[] = {"KiB", "MiB", "GiB", "TiB"};
  if (bytes < 1024) return fmt::format("{} B", bytes);
  double v = static_cast<double>(bytes);
  int u = -1;
  while (v >= 1024 && u < 3) v /= 1024, ++u;
  return v < 10 ? fmt::format("{:.1f} {}", v, k_units[u]) : fmt::format("{:.0f} {}", v, k_units[u]);
}

}  // namespace hpclaunch
