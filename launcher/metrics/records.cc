// The metrics records as JSON lines: see records.h.
#include "metrics/records.h"

#include <cmath>
#include <cstdio>
#include <cstdlib>

#include <nlohmann/json.hpp>

#include "util/error.h"

namespace hpclaunch::metrics {

namespace {

using Json = nlohmann::ordered_json;  // keeps "type" first when writing and a user's field order when reading
const char* k_records_fix = "give a file written by `hpclaunch-train --metrics`";

// A number to 9 significant digits (nlohmann-json then writes the shortest form that reads back the same: 0.0309,
// not 0.030868138999999996); NaN and infinities as null (nlohmann-json's own choice, stated here).
Json number(double v) {
  if (!std::isfinite(v)) return Json(nullptr);
  char text[32];
  std::snprintf(text, sizeof text, "%.9g", v);
  return Json(std::strtod(text, nullptr));
}

// Unix seconds to the millisecond.
Json seconds(double t) { return std::isfinite(t) ? Json(std::round(t * 1000) / 1000) : Json(nullptr); }

void put_time(Json& j, const std::optional<double>& time, const std::optional<double>& wall_s) {
  if (wall_s) j["wall_s"] = number(*wall_s);
  if (time) j["time"] = seconds(*time);
}

Json to_json(const Step& s) {
  Json j{{"type", "step"}, {"epoch", s.epoch}, {"step", s.step}, {"loss", number(s.loss)}, {"lr", number(s.lr)},
         {"samples_per_s", number(s.samples_per_s)}, {"step_time_s", number(s.step_time_s)},
         {"allreduce_s", number(s.allreduce_s)}, {"data_wait_s", number(s.data_wait_s)}, {"cpu_s", number(s.cpu_s)}};
  if (s.skipped) j["skipped"] = true;
  put_time(j, s.time, s.wall_s);
  return j;
}

Json to_json(const Validation& v) {
  Json j{{"type", "validation"}, {"epoch", v.epoch}, {"step", v.step}, {"val_loss", number(v.val_loss)},
         {"time_s", number(v.time_s)}};
  put_time(j, v.time, v.wall_s);
  return j;
}

Json to_json(const RunStart& r) {
  Json j{{"type", "run_start"}, {"step", r.step}, {"model", r.model}, {"world_size", r.world_size},
         {"global_batch", r.global_batch}, {"on_nonfinite", r.on_nonfinite}};
  put_time(j, r.time, std::nullopt);
  return j;
}

Json to_json(const RunEnd& r) {
  Json j{{"type", "run_end"}, {"step", r.step}, {"status", r.status}, {"exit_code", r.exit_code},
         {"skipped_steps", r.skipped_steps}};
  if (r.nonfinite_step) {
    j["nonfinite_step"] = *r.nonfinite_step;
    j["nonfinite_ranks"] = r.nonfinite_ranks;
    j["last_finite_step"] = r.last_finite_step ? Json(*r.last_finite_step) : Json(nullptr);
    j["last_finite_loss"] = number(r.last_finite_loss);
  }
  put_time(j, r.time, std::nullopt);
  return j;
}

Json to_json(const UserRecord& u) {
  Json j{{"step", u.step}};
  for (const auto& [key, value] : u.values) j[key] = number(value);
  return j;
}

Json to_json(const OtherRecord& o) {
  Json j{{"type", o.type}};
  if (o.step) j["step"] = *o.step;
  return j;
}

// A number, or NaN for null (a value that was not finite); nullopt when absent or of another kind.
std::optional<double> number_or_null(const Json& j, const char* key) {
  auto it = j.find(key);
  if (it == j.end()) return std::nullopt;
  if (it->is_null()) return k_nan;
  if (it->is_number()) return it->get<double>();
  return std::nullopt;
}

double get(const Json& j, const char* key, double fallback = 0) { return number_or_null(j, key).value_or(fallback); }

std::optional<double> optional_number(const Json& j, const char* key) {
  auto it = j.find(key);
  if (it == j.end() || !it->is_number()) return std::nullopt;
  return it->get<double>();
}

std::optional<int64_t> integer(const Json& j, const char* key) {
  auto it = j.find(key);
  if (it == j.end() || !it->is_number()) return std::nullopt;
  const double d = it->get<double>();
  // A number past int64's range (a step of 1e27) is no step: the cast would be undefined (found by fuzz/metrics.cc).
  if (!(d > -9.2e18 && d < 9.2e18)) return std::nullopt;
  return static_cast<int64_t>(d);
}

std::string text(const Json& j, const char* key) {
  auto it = j.find(key);
  return it != j.end() && it->is_string() ? it->get<std::string>() : std::string();
}

// Required fields missing: an error naming `where`, or (no `where`) an OtherRecord.
std::optional<Record> incomplete(const std::string& where, const std::string& type, const Json& j,
                                 const std::string& what) {
  if (!where.empty()) throw Error(where, what, k_records_fix);
  return OtherRecord{type, integer(j, "step")};
}

std::optional<Record> from_json(const Json& j, const std::string& where) {
  const std::string type = text(j, "type");
  const std::optional<int64_t> step = integer(j, "step");
  if (type == "step") {
    if (!step) return incomplete(where, type, j, "step record without a numeric \"step\"");
    const std::optional<double> loss = number_or_null(j, "loss");
    if (!loss) return incomplete(where, type, j, "step record without a numeric \"loss\"");
    Step s;
    s.epoch = integer(j, "epoch").value_or(0);
    s.step = *step;
    s.loss = *loss;
    s.lr = get(j, "lr");
    s.samples_per_s = get(j, "samples_per_s");
    s.step_time_s = get(j, "step_time_s");
    s.allreduce_s = get(j, "allreduce_s");
    s.data_wait_s = get(j, "data_wait_s");
    s.cpu_s = get(j, "cpu_s");
    s.time = optional_number(j, "time");
    s.wall_s = optional_number(j, "wall_s");
    auto skipped = j.find("skipped");
    s.skipped = skipped != j.end() && skipped->is_boolean() && skipped->get<bool>();
    return s;
  }
  if (type == "validation") {
    const std::optional<double> loss = number_or_null(j, "val_loss");
    if (!step || !loss) return incomplete(where, type, j, "validation record without numeric \"step\" and \"val_loss\"");
    Validation v;
    v.epoch = integer(j, "epoch").value_or(0);
    v.step = *step;
    v.val_loss = *loss;
    v.time_s = get(j, "time_s");
    v.time = optional_number(j, "time");
    v.wall_s = optional_number(j, "wall_s");
    return v;
  }
  if (type == "run_start") {
    RunStart r;
    r.step = step.value_or(0);
    r.model = text(j, "model");
    r.world_size = integer(j, "world_size").value_or(1);
    r.global_batch = integer(j, "global_batch").value_or(0);
    r.on_nonfinite = text(j, "on_nonfinite");
    r.time = optional_number(j, "time");
    return r;
  }
  if (type == "run_end") {
    RunEnd r;
    r.step = step.value_or(0);
    r.status = text(j, "status");
    r.exit_code = static_cast<int>(integer(j, "exit_code").value_or(0));
    r.skipped_steps = integer(j, "skipped_steps").value_or(0);
    r.nonfinite_step = integer(j, "nonfinite_step");
    if (auto ranks = j.find("nonfinite_ranks"); ranks != j.end() && ranks->is_array())
      for (const auto& rank : *ranks)
        if (rank.is_number_integer()) r.nonfinite_ranks.push_back(rank.get<int>());
    r.last_finite_step = integer(j, "last_finite_step");
    r.last_finite_loss = get(j, "last_finite_loss", k_nan);
    r.time = optional_number(j, "time");
    return r;
  }
  if (!j.contains("type") && step) {
    UserRecord u;
    u.step = *step;
    for (const auto& [key, value] : j.items()) {
      if (key == "step") continue;
      if (value.is_number()) u.values.emplace_back(key, value.get<double>());
      else if (value.is_null()) u.values.emplace_back(key, k_nan);
    }
    return u;
  }
  return OtherRecord{type, step};
}

// Python's json.dumps writes NaN, Infinity and -Infinity, which JSON has not: as null (outside strings), so a
// user's log of a diverged run reads as one with gaps. Empty when the line has none.
std::string python_non_finite_to_null(std::string_view line) {
  std::string out;
  bool in_string = false, changed = false;
  for (size_t i = 0; i < line.size(); ++i) {
    const char c = line[i];
    if (in_string) {
      out += c;
      if (c == '\\' && i + 1 < line.size()) out += line[++i];
      else if (c == '"') in_string = false;
      continue;
    }
    if (c == '"') in_string = true;
    bool replaced = false;
    for (std::string_view token : {"-Infinity", "Infinity", "NaN"}) {
      if (line.substr(i, token.size()) == token) {
        out += "null";
        i += token.size() - 1;
        replaced = changed = true;
        break;
      }
    }
    if (!replaced) out += c;
  }
  return changed ? out : std::string();
}

}  // namespace

std::string to_line(const Record& record) {
  return std::visit([](const auto& r) { return to_json(r).dump(); }, record) + "\n";
}

std::optional<Record> parse_line(std::string_view line, const std::string& where) {
  Json j = Json::parse(line.begin(), line.end(), nullptr, false);
  if (j.is_discarded()) {
    const std::string nulled = python_non_finite_to_null(line);
    if (!nulled.empty()) j = Json::parse(nulled, nullptr, false);
  }
  if (j.is_discarded() || !j.is_object()) return std::nullopt;
  return from_json(j, where);
}

std::optional<int64_t> step_of(const Record& record) {
  return std::visit([](const auto& r) -> std::optional<int64_t> { return r.step; }, record);
}

}  // namespace hpclaunch::metrics
