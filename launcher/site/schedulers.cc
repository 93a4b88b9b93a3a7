#include "site/schedulers.h"

#include <algorithm>
#include <deque>

#include "util/error.h"

namespace hpclaunch {

namespace {

// A deque: to_string hands out its strings' c_str(), which a later registration must not move.
std::deque<std::string>& registered_names() {
  static std::deque<std::string> known = {
#define HPCLAUNCH_SCHEDULER(name, dialect, backend) #name,
#include "hpclaunch_schedulers.def"
#undef HPCLAUNCH_SCHEDULER
  };
  return known;
}

}  // namespace

const char* to_string(Scheduler s) {
  auto i = static_cast<size_t>(s);
  return i < registered_names().size() ? registered_names()[i].c_str() : "?";
}

std::optional<Scheduler> scheduler_named(std::string_view name) {
  for (size_t i = 0; i < registered_names().size(); ++i)
    if (registered_names()[i] == name) return static_cast<Scheduler>(i);
  return std::nullopt;
}

EnumNames<Scheduler> scheduler_names() {
  EnumNames<Scheduler> out;
  for (size_t i = 0; i < registered_names().size(); ++i)
    out.emplace_back(registered_names()[i], static_cast<Scheduler>(i));
  std::sort(out.begin(), out.end(), [](const auto& a, const auto& b) { return a.first < b.first; });
  return out;
}

Scheduler add_scheduler_name(const std::string& name) {
  if (name.empty() || scheduler_named(name))
    throw Error("register_scheduler", "'" + name + "' is " + (name.empty() ? "empty" : "taken"),
                "give the new scheduler a name of its own");
  registered_names().push_back(name);
  return static_cast<Scheduler>(registered_names().size() - 1);
}

}  // namespace hpclaunch
