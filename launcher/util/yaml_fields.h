// Field tables for YAML mappings: each key of a struct's mapping is one entry, with how its value is read (Reader's
// checks and messages) and how it is written back (yaml-cpp's emitter), so the keys a mapping allows, its reader and
// its writer come from that one entry. Used for site profiles (site/profile_yaml.cc).
#pragma once
#include <yaml-cpp/yaml.h>

#include <algorithm>
#include <functional>
#include <string>
#include <vector>

#include "util/enum_names.h"
#include "util/time_limit.h"
#include "util/yaml_reader.h"

namespace hpclaunch {

// One key of a mapping of T: `read` puts its value `n` (called `name` in messages) into T, null where the key is read
// elsewhere; `write` writes the value, null where it is never written, when `shown` says so (null: always).
template <typename T>
struct Field {
  std::string key;
  std::function<void(const Reader& r, const YAML::Node& n, const std::string& name, T* to)> read = nullptr;
  std::function<void(YAML::Emitter& e, const T& from)> write = nullptr;
  std::function<bool(const T& from)> shown = nullptr;
};
template <typename T>
using FieldTable = std::vector<Field<T>>;

template <typename T>
std::vector<std::string> keys_of(const FieldTable<T>& fields) {
  std::vector<std::string> keys;
  for (const Field<T>& f : fields) keys.push_back(f.key);
  return keys;
}

// Reads the keys of `n` that `fields` has into `to`, leaving the others as they are (what a mapping inherits).
template <typename T>
void read_present(const Reader& r, const YAML::Node& n, const std::string& prefix, const FieldTable<T>& fields, T* to) {
  for (const Field<T>& f : fields)
    if (f.read && n[f.key]) f.read(r, n[f.key], prefix.empty() ? f.key : prefix + "." + f.key, to);
}

// Refuses a key `fields` lacks, then a missing one of `required` (`fix` says what to write); reads the rest.
template <typename T>
void read_fields(const Reader& r, const YAML::Node& n, const std::string& name, const FieldTable<T>& fields, T* to,
                 const std::vector<std::string>& required = {}, const std::string& fix = "") {
  r.check_keys(n, name, keys_of(fields));
  for (const std::string& key : required)
    if (!n[key]) r.fail(n, name, "missing field '" + key + "'", fix);
  read_present(r, n, name, fields, to);
}

// read_fields into a new T: for a mapping that, given, replaces the inherited one whole.
template <typename T>
T read_fresh(const Reader& r, const YAML::Node& n, const std::string& name, const FieldTable<T>& fields,
             const std::vector<std::string>& required = {}, const std::string& fix = "") {
  T out;
  read_fields(r, n, name, fields, &out, required, fix);
  return out;
}

// How a mapping is written beyond its fields, and read where it has checks of its own.
template <typename S>
struct MapRules {
  void (*read)(const Reader&, const YAML::Node&, const std::string& name, S*) = nullptr;  // null: read_fields
  bool (*shown)(const S&) = nullptr;  // whether it is written; null: when one of its fields is
  bool flow = false;                  // on one line: {a: 1, b: 2}
  std::vector<std::string> order = {};  // the keys written first, in this order; the others after, in the table's
};

template <typename T>
bool is_shown(const Field<T>& f, const T& from) {
  return f.write && (!f.shown || f.shown(from));
}

template <typename T>
std::vector<const Field<T>*> in_order(const FieldTable<T>& fields, const std::vector<std::string>& order) {
  std::vector<const Field<T>*> out;
  for (const std::string& key : order)
    for (const Field<T>& f : fields)
      if (f.key == key) out.push_back(&f);
  for (const Field<T>& f : fields)
    if (std::find(order.begin(), order.end(), f.key) == order.end()) out.push_back(&f);
  return out;
}

template <typename T>
void write_map(YAML::Emitter& e, const FieldTable<T>& fields, const T& from, const MapRules<T>& rules = {}) {
  if (rules.flow) e << YAML::Flow;
  e << YAML::BeginMap;
  for (const Field<T>* f : in_order(fields, rules.order))
    if (is_shown(*f, from)) {
      e << YAML::Key << f->key << YAML::Value;
      f->write(e, from);
    }
  e << YAML::EndMap;
}

// A kind of value: how it is read and written.
template <typename V>
struct ValueKind {
  std::function<V(const Reader& r, const YAML::Node& n, const std::string& name)> read;
  std::function<void(YAML::Emitter& e, const V& value)> write;
};

inline const ValueKind<std::string> k_text = {
    [](const auto& r, const auto& n, const auto& name) { return r.scalar(n, name); },
    [](auto& e, const auto& v) { e << v; }};
inline const ValueKind<bool> k_flag = {
    [](const auto& r, const auto& n, const auto& name) { return r.boolean(n, name); },
    [](auto& e, const auto& v) { e << v; }};
// Seconds, written as sbatch's HH:MM:SS or D-HH:MM:SS.
inline const ValueKind<long> k_time = {
    [](const auto& r, const auto& n, const auto& name) { return r.time(n, name); },
    [](auto& e, const auto& v) { e << format_slurm_time(v); }};
// A list of words, written on one line; a list of lines (shell lines, URLs), written one a line.
inline const ValueKind<std::vector<std::string>> k_list = {
    [](const auto& r, const auto& n, const auto& name) { return r.strings(n, name); },
    [](auto& e, const auto& v) { e << YAML::Flow << v; }};
inline const ValueKind<std::vector<std::string>> k_lines = {k_list.read, [](auto& e, const auto& v) { e << v; }};

inline ValueKind<int> whole_number(long long min, long long max) {
  return {[=](const auto& r, const auto& n, const auto& name) { return r.integer(n, name, min, max); },
          [](auto& e, const auto& v) { e << v; }};
}

// One of `names`: an enum's table (kept by reference: a constant), or a registry's (a function, asked each time: a
// program may add names).
template <typename E>
ValueKind<E> one_of(EnumNames<E>&& names) = delete;
template <typename E>
ValueKind<E> one_of(const EnumNames<E>& names) {
  return {[&names](const auto& r, const auto& n, const auto& name) { return r.choice(n, name, names); },
          [&names](auto& e, const E& v) { e << name_of(names, v); }};
}
template <typename E>
ValueKind<E> one_of(EnumNames<E> (*names)()) {
  return {[names](const auto& r, const auto& n, const auto& name) { return r.choice(n, name, names()); },
          [names](auto& e, const E& v) { e << name_of(names(), v); }};
}

// `kind`, then `check` on the value it read (a value with a rule of its own).
template <typename V>
ValueKind<V> checked(ValueKind<V> kind,
                     void (*check)(const Reader&, const YAML::Node&, const std::string& name, const V&)) {
  return {[kind, check](const Reader& r, const YAML::Node& n, const std::string& name) {
            V v = kind.read(r, n, name);
            check(r, n, name, v);
            return v;
          },
          kind.write};
}

enum class Shown { unless_default, always };

// The key `key` of T, the member `m`, read and written as `kind`; written only where it differs from T's default,
// unless `when` is Shown::always.
template <typename T, typename V>
Field<T> field(std::string key, V T::*m, const ValueKind<V>& kind, Shown when = Shown::unless_default) {
  Field<T> f{std::move(key),
             [m, kind](const Reader& r, const YAML::Node& n, const std::string& name, T* to) {
               to->*m = kind.read(r, n, name);
             },
             [m, kind](YAML::Emitter& e, const T& from) { kind.write(e, from.*m); }};
  if (when == Shown::unless_default) f.shown = [m](const T& from) { return from.*m != T{}.*m; };
  return f;
}

// `f`, written only where `when` says.
template <typename T>
Field<T> shown_if(Field<T> f, bool (*when)(const T&)) {
  f.shown = when;
  return f;
}

// The mapping at `key` of T, the member `m`, read and written by `fields` (a constant: kept by reference) and `rules`.
template <typename T, typename S>
Field<T> section(std::string key, S T::*m, const FieldTable<S>& fields, const MapRules<S>& rules = {}) {
  return {std::move(key),
          [m, &fields, rules](const Reader& r, const YAML::Node& n, const std::string& name, T* to) {
            rules.read ? rules.read(r, n, name, &(to->*m)) : read_fields(r, n, name, fields, &(to->*m));
          },
          [m, &fields, rules](YAML::Emitter& e, const T& from) { write_map(e, fields, from.*m, rules); },
          [m, &fields, rules](const T& from) {
            if (rules.shown) return rules.shown(from.*m);
            return std::any_of(fields.begin(), fields.end(), [&](const Field<S>& f) { return is_shown(f, from.*m); });
          }};
}

// The list of mappings at `key` of T, the member `m`, read by `read` (the list's own messages), written one flow
// mapping an item by `fields` (a constant: kept by reference), unless empty.
template <typename T, typename I>
Field<T> list_section(std::string key, std::vector<I> T::*m, const FieldTable<I>& fields,
                      void (*read)(const Reader&, const YAML::Node&, const std::string& name, std::vector<I>*)) {
  return {std::move(key),
          [m, read](const Reader& r, const YAML::Node& n, const std::string& name, T* to) {
            read(r, n, name, &(to->*m));
          },
          [m, &fields](YAML::Emitter& e, const T& from) {
            e << YAML::BeginSeq;
            for (const I& item : from.*m) write_map(e, fields, item, {.flow = true});
            e << YAML::EndSeq;
          },
          [m](const T& from) { return !(from.*m).empty(); }};
}

}  // namespace hpclaunch
