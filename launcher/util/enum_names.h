// An enum's names in one table, spelled once: its to_string, and the readers of YAML, JSON and flags, use the
// same table (site/profile.h, runtime/gpu_bind.h, runtime/rendezvous.h hold them).
#pragma once
#include <optional>
#include <string>
#include <string_view>
#include <utility>
#include <vector>

namespace hpclaunch {

template <class E>
using EnumNames = std::vector<std::pair<std::string, E>>;

// The name of `value`, or "?" when the table has none.
template <class E>
const char* name_of(const EnumNames<E>& names, E value) {
  for (const auto& [name, v] : names)
    if (v == value) return name.c_str();
  return "?";
}

template <class E>
std::optional<E> value_of(const EnumNames<E>& names, std::string_view name) {
  for (const auto& [n, v] : names)
    if (n == name) return v;
  return std::nullopt;
}

// The names in the table's order.
template <class E>
std::vector<std::string> names_of(const EnumNames<E>& names) {
  std::vector<std::string> out;
  for (const auto& entry : names) out.push_back(entry.first);
  return out;
}

}  // namespace hpclaunch
