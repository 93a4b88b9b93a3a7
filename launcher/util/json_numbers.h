// nlohmann converts a JSON number with a fraction or an exponent to a C++ integer with a static_cast, which is
// undefined behaviour past the integer's range (`"nodes": 1e47` in a file changed by hand; found by the fuzz
// targets job_files and failure_record). Files whose fields are integers are checked with floats_fit_int before
// they are read; a field read alone goes through json_int. Header-only: the trainer's C++17 sees it too.
#pragma once
#include <climits>
#include <nlohmann/json.hpp>
#include <string>

namespace hpclaunch {

// Whether every float in `j`, at any depth, lies within int's range (an integer field then reads it defined).
inline bool floats_fit_int(const nlohmann::json& j) {
  if (j.is_number_float()) {
    const double d = j.get<double>();
    return d >= static_cast<double>(INT_MIN) && d <= static_cast<double>(INT_MAX);
  }
  if (j.is_structured())
    for (const auto& v : j)
      if (!floats_fit_int(v)) return false;
  return true;
}

// `key` of object `j` as an int, `fallback` when absent. A float outside int's range throws nlohmann's own
// type_error, as a string in that place does.
inline int json_int(const nlohmann::json& j, const char* key, int fallback) {
  const auto it = j.find(key);
  if (it == j.end()) return fallback;
  if (!floats_fit_int(*it))
    throw nlohmann::json::type_error::create(302, std::string(key) + " is out of the range of an int", &*it);
  return it->get<int>();
}

}  // namespace hpclaunch
