// An enum that a program may extend: the ids of the built-in values (from a .def file), then those registered at
// run time (a test's toy launcher), each with its name and the facts this layer keeps of it. The launchers and
// GPU styles (site/launchers.h, gpu_styles.h) are such registries; a name it does not know is refused by whoever
// reads it (a profile, plan.json), never guessed.
#pragma once
#include <deque>
#include <initializer_list>
#include <optional>
#include <string>
#include <string_view>
#include <utility>

#include "util/enum_names.h"
#include "util/error.h"

namespace hpclaunch {

template <class E, class Facts>
class OpenEnum {
 public:
  // `what` names the registration in errors: "register_launcher".
  OpenEnum(const char* what, std::initializer_list<std::pair<std::string, Facts>> builtin)
      : m_what(what), m_entries(builtin) {}

  // Its name ("?" for an id never given).
  const char* name(E id) const {
    auto i = static_cast<size_t>(id);
    return i < m_entries.size() ? m_entries[i].first.c_str() : "?";
  }
  std::optional<E> named(std::string_view name) const {
    for (size_t i = 0; i < m_entries.size(); ++i)
      if (m_entries[i].first == name) return static_cast<E>(i);
    return std::nullopt;
  }
  // Every name and id, in id order.
  EnumNames<E> names() const {
    EnumNames<E> out;
    for (size_t i = 0; i < m_entries.size(); ++i) out.emplace_back(m_entries[i].first, static_cast<E>(i));
    return out;
  }
  // What this layer knows of it; `fallback` for an id never given.
  const Facts& facts(E id, const Facts& fallback) const {
    auto i = static_cast<size_t>(id);
    return i < m_entries.size() ? m_entries[i].second : fallback;
  }
  // A new id for `name`. Throws Error when the name is empty or taken.
  E add(const std::string& name, Facts facts) {
    if (name.empty() || this->named(name))
      throw Error(m_what, "'" + name + "' is " + (name.empty() ? "empty" : "taken"), "give the new one a name of its own");
    m_entries.emplace_back(name, std::move(facts));
    return static_cast<E>(m_entries.size() - 1);
  }

 private:
  const char* m_what;
  std::deque<std::pair<std::string, Facts>> m_entries;  // a deque: name() hands out c_str(), which a later add must not move
};

}  // namespace hpclaunch
