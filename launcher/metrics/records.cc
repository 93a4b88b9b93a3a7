// The metrics records as JSON lines: see records.h.
#include "metrics/records.h"

#include <charconv>
#include <climits>
#include <cmath>
#include <cstdio>
#include <cstdlib>
#include <forward_list>

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

// A line's top-level fields as the reader needs them: no document is built, and nothing is copied out of the line
// (a 1,000-task array's report reads 400,000 lines: bench/report/RESULTS.md). Each key is kept as it comes; a key
// given twice is read as nlohmann-json's ordered_json reads it, its last value in its first place (find and
// first_of).
struct Value {
  enum class Kind { null, boolean, number, string, array, object } kind = Kind::null;
  bool flag = false;
  double number = 0;
  std::string_view text;      // into the line, or into Fields::owned
  std::vector<int> integers;  // an array's integer elements (nonfinite_ranks), in order
};

// Two short keys equal (inline: a library call to memcmp per key compared was a tenth of reading a file).
inline bool same(std::string_view a, std::string_view b) {
  if (a.size() != b.size()) return false;
  for (size_t i = 0; i < a.size(); ++i)
    if (a[i] != b[i]) return false;
  return true;
}

struct Fields {
  std::vector<std::pair<std::string_view, Value>> items;
  std::forward_list<std::string> owned;  // the keys and strings nlohmann-json's reader hands over (they stay put)
  // The key's last value, or nullptr.
  const Value* find(std::string_view key) const {
    for (auto it = items.rbegin(); it != items.rend(); ++it)
      if (same(it->first, key)) return &it->second;
    return nullptr;
  }
  // Whether items[i] is its key's first place (a key given twice is listed once, where it first came).
  bool first_of(size_t i) const {
    for (size_t j = 0; j < i; ++j)
      if (same(items[j].first, items[i].first)) return false;
    return true;
  }
  void clear() { items.clear(), owned.clear(); }
};

// Collects the top-level object's fields; false (and the line is no record) for anything else.
class FieldReader : public nlohmann::json_sax<Json> {
 public:
  explicit FieldReader(Fields* out) : out_(out) {}
  bool null() override { return scalar([](Value&) {}); }
  bool boolean(bool b) override {
    return scalar([b](Value& v) { v.kind = Value::Kind::boolean, v.flag = b; });
  }
  bool number_integer(number_integer_t n) override { return integral(static_cast<double>(n), n >= INT_MIN && n <= INT_MAX); }
  bool number_unsigned(number_unsigned_t n) override { return integral(static_cast<double>(n), n <= INT_MAX); }
  bool number_float(number_float_t n, const string_t&) override {
    return scalar([n](Value& v) { v.kind = Value::Kind::number, v.number = n; });
  }
  bool string(string_t& s) override {
    return scalar([this, &s](Value& v) { v.kind = Value::Kind::string, v.text = out_->owned.emplace_front(std::move(s)); });
  }
  bool binary(binary_t&) override { return false; }
  bool start_object(std::size_t) override {
    if (depth_++ == 0) return object_ = true;
    if (depth_ == 2) value().kind = Value::Kind::object;
    return true;
  }
  bool end_object() override {
    --depth_;
    return true;
  }
  bool start_array(std::size_t) override {
    if (depth_++ == 0) return false;  // the line is an array, not an object
    if (depth_ == 2) value().kind = Value::Kind::array;
    return true;
  }
  bool end_array() override {
    --depth_;
    return true;
  }
  bool key(string_t& k) override {
    if (depth_ != 1) return true;
    out_->items.emplace_back(out_->owned.emplace_front(std::move(k)), Value());
    current_ = out_->items.size() - 1;
    return true;
  }
  bool parse_error(std::size_t, const std::string&, const nlohmann::detail::exception&) override { return false; }
  bool object() const { return object_; }

 private:
  Value& value() { return out_->items[current_].second; }
  template <class Set>
  bool scalar(Set set) {
    if (depth_ == 0) return false;  // a line that is one number or string: no object
    if (depth_ == 1) set(value());
    return true;
  }
  bool integral(double n, bool fits_int) {
    if (depth_ == 2 && value().kind == Value::Kind::array) {
      if (fits_int) value().integers.push_back(static_cast<int>(n));
      return true;
    }
    return scalar([n](Value& v) { v.kind = Value::Kind::number, v.number = n; });
  }
  Fields* out_;
  size_t current_ = 0;
  int depth_ = 0;
  bool object_ = false;
};

// A number, or NaN for null (a value that was not finite); nullopt when absent or of another kind.
std::optional<double> number_or_null(const Fields& j, std::string_view key) {
  const Value* v = j.find(key);
  if (!v) return std::nullopt;
  if (v->kind == Value::Kind::null) return k_nan;
  if (v->kind == Value::Kind::number) return v->number;
  return std::nullopt;
}

double get(const Fields& j, std::string_view key, double fallback = 0) { return number_or_null(j, key).value_or(fallback); }

std::optional<double> optional_number(const Fields& j, std::string_view key) {
  const Value* v = j.find(key);
  if (!v || v->kind != Value::Kind::number) return std::nullopt;
  return v->number;
}

std::optional<int64_t> integer(const Fields& j, std::string_view key) {
  const Value* v = j.find(key);
  if (!v || v->kind != Value::Kind::number) return std::nullopt;
  const double d = v->number;
  // A number past int64's range (a step of 1e27) is no step: the cast would be undefined (found by fuzz/metrics.cc).
  if (!(d > -9.2e18 && d < 9.2e18)) return std::nullopt;
  return static_cast<int64_t>(d);
}

std::string_view text(const Fields& j, std::string_view key) {
  const Value* v = j.find(key);
  return v && v->kind == Value::Kind::string ? v->text : std::string_view();
}

// Required fields missing: an error naming `where`, or (no `where`) an OtherRecord.
std::optional<Record> incomplete(const std::string& where, std::string_view type, const Fields& j,
                                 const std::string& what) {
  if (!where.empty()) throw Error(where, what, k_records_fix);
  return OtherRecord{std::string(type), integer(j, "step")};
}

std::optional<Record> from_fields(const Fields& j, const std::string& where) {
  const std::string_view type = text(j, "type");
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
    const Value* skipped = j.find("skipped");
    s.skipped = skipped && skipped->kind == Value::Kind::boolean && skipped->flag;
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
    r.model = std::string(text(j, "model"));
    r.world_size = integer(j, "world_size").value_or(1);
    r.global_batch = integer(j, "global_batch").value_or(0);
    r.on_nonfinite = std::string(text(j, "on_nonfinite"));
    r.time = optional_number(j, "time");
    return r;
  }
  if (type == "run_end") {
    RunEnd r;
    r.step = step.value_or(0);
    r.status = std::string(text(j, "status"));
    r.exit_code = static_cast<int>(integer(j, "exit_code").value_or(0));
    r.skipped_steps = integer(j, "skipped_steps").value_or(0);
    r.nonfinite_step = integer(j, "nonfinite_step");
    if (const Value* ranks = j.find("nonfinite_ranks"); ranks && ranks->kind == Value::Kind::array)
      r.nonfinite_ranks = ranks->integers;
    r.last_finite_step = integer(j, "last_finite_step");
    r.last_finite_loss = get(j, "last_finite_loss", k_nan);
    r.time = optional_number(j, "time");
    return r;
  }
  if (!j.find("type") && step) {
    UserRecord u;
    u.step = *step;
    for (size_t i = 0; i < j.items.size(); ++i) {
      const std::string_view key = j.items[i].first;
      if (key == "step" || !j.first_of(i)) continue;
      const Value& value = *j.find(key);
      if (value.kind == Value::Kind::number) u.values.emplace_back(key, value.number);
      else if (value.kind == Value::Kind::null) u.values.emplace_back(key, k_nan);
    }
    return u;
  }
  return OtherRecord{std::string(type), step};
}

// The common line read without nlohmann-json: one object of numbers, plain strings (no escapes, ASCII), true,
// false, null and arrays of integers, as the trainer and most logs write it. It accepts only what is valid JSON
// and reads it as nlohmann-json does; false (nothing decided) for anything else, which nlohmann-json then reads.
// It reads a 100,000-step file in a third of the time nlohmann-json takes (bench/report/RESULTS.md).
class FlatReader {
 public:
  explicit FlatReader(std::string_view text) : s_(text) {}
  bool read(Fields* out) {
    if (!punct('{')) return false;
    if (punct('}')) return end();
    do {
      std::string_view key;
      if (!string(&key) || !punct(':')) return false;
      if (!value(&out->items.emplace_back(key, Value()).second)) return false;
    } while (punct(','));
    return punct('}') && end();
  }

 private:
  void space() {
    while (at_ < s_.size() && (s_[at_] == ' ' || s_[at_] == '\t' || s_[at_] == '\n' || s_[at_] == '\r')) ++at_;
  }
  bool punct(char c) {
    space();
    if (at_ >= s_.size() || s_[at_] != c) return false;
    ++at_;
    return true;
  }
  bool end() {
    space();
    return at_ == s_.size();
  }
  bool word(std::string_view w) {
    if (s_.substr(at_, w.size()) != w) return false;
    at_ += w.size();
    return true;
  }
  bool string(std::string_view* out) {
    if (!punct('"')) return false;
    const size_t start = at_;
    for (; at_ < s_.size(); ++at_) {
      const auto c = static_cast<unsigned char>(s_[at_]);
      if (c == '"') {
        *out = s_.substr(start, at_++ - start);
        return true;
      }
      if (c == '\\' || c < 0x20 || c >= 0x80) return false;  // escapes, control bytes, UTF-8: nlohmann-json's
    }
    return false;
  }
  static bool digit(char c) { return c >= '0' && c <= '9'; }
  // A JSON number (-?(0|[1-9][0-9]*)(.[0-9]+)?([eE][+-]?[0-9]+)?); `integral` when it has no fraction or exponent.
  bool number(double* out, bool* integral) {
    const size_t start = at_;
    if (at_ < s_.size() && s_[at_] == '-') ++at_;
    if (at_ >= s_.size() || !digit(s_[at_])) return false;
    if (s_[at_++] != '0')
      while (at_ < s_.size() && digit(s_[at_])) ++at_;
    *integral = true;
    if (at_ < s_.size() && s_[at_] == '.') {
      *integral = false;
      if (++at_ >= s_.size() || !digit(s_[at_])) return false;
      while (at_ < s_.size() && digit(s_[at_])) ++at_;
    }
    if (at_ < s_.size() && (s_[at_] == 'e' || s_[at_] == 'E')) {
      *integral = false;
      if (++at_ < s_.size() && (s_[at_] == '+' || s_[at_] == '-')) ++at_;
      if (at_ >= s_.size() || !digit(s_[at_])) return false;
      while (at_ < s_.size() && digit(s_[at_])) ++at_;
    }
    const auto [end, ec] = std::from_chars(s_.data() + start, s_.data() + at_, *out);
    if (*integral && *out == 0) *out = 0;  // -0 is nlohmann-json's integer 0, not the double -0.0
    return ec == std::errc() && end == s_.data() + at_;  // out of range (1e999, 1e-999): nlohmann-json's to say
  }
  bool value(Value* v) {
    space();
    if (at_ >= s_.size()) return false;
    const char c = s_[at_];
    bool integral = false;
    if (c == '"') {
      std::string_view text;
      if (!string(&text)) return false;
      v->kind = Value::Kind::string, v->text = text;
      return true;
    }
    if (c == '[') {
      ++at_;
      v->kind = Value::Kind::array;
      if (punct(']')) return true;
      do {
        space();
        double n = 0;
        if (!number(&n, &integral) || !integral || n < INT_MIN || n > INT_MAX) return false;
        v->integers.push_back(static_cast<int>(n));
      } while (punct(','));
      return punct(']');
    }
    if (c == 't' || c == 'f' || c == 'n') {
      if (word("true")) return v->kind = Value::Kind::boolean, v->flag = true, true;
      if (word("false")) return v->kind = Value::Kind::boolean, v->flag = false, true;
      return word("null");  // Value's kind is null already
    }
    v->kind = Value::Kind::number;
    return number(&v->number, &integral);
  }
  std::string_view s_;
  size_t at_ = 0;
};

// The line's fields; false when it is not one JSON object.
bool read_fields(std::string_view line, Fields* out) {
  out->clear();
  if (FlatReader(line).read(out)) return true;
  out->clear();
  FieldReader reader(out);
  return Json::sax_parse(line.begin(), line.end(), &reader) && reader.object();
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
  thread_local Fields fields;  // kept from line to line: its room is allocated once
  std::string nulled;          // the fields may point into it
  if (!read_fields(line, &fields)) {
    nulled = python_non_finite_to_null(line);
    if (nulled.empty() || !read_fields(nulled, &fields)) return std::nullopt;
  }
  return from_fields(fields, where);
}

std::optional<int64_t> step_of(const Record& record) {
  return std::visit([](const auto& r) -> std::optional<int64_t> { return r.step; }, record);
}

}  // namespace hpclaunch::metrics
