#include "agent/file_timer.h"

#include <nlohmann/json.hpp>

#include <algorithm>

namespace hpclaunch {

std::optional<TimerRequest> parse_timer_request(std::string_view line, std::string* error) {
  auto j = nlohmann::json::parse(line, nullptr, false);
  if (j.is_discarded() || !j.is_object()) {
    *error = "not JSON";
    return std::nullopt;
  }
  auto pid = j.find("pid"), scope = j.find("scope_id"), exp = j.find("expiration_time"), sig = j.find("signal");
  if (pid == j.end() || !pid->is_number_integer() || scope == j.end() || !scope->is_string() || exp == j.end() ||
      !exp->is_number() || (sig != j.end() && !sig->is_number_integer())) {
    *error = "not a FileTimerRequest (pid, scope_id, expiration_time, signal)";
    return std::nullopt;
  }
  TimerRequest r;
  r.pid = pid->get<int>();
  r.scope = scope->get<std::string>();
  r.expiration = exp->get<double>();
  r.signal = sig == j.end() ? 0 : sig->get<int>();
  return r;
}

void FileTimers::add(const TimerRequest& r) {
  auto key = std::make_pair(r.pid, r.scope);
  if (r.expiration < 0) m_timers.erase(key);
  else m_timers[key] = r;
}

std::vector<Reap> FileTimers::expired(double now) {
  std::map<int, std::vector<const TimerRequest*>> by_pid;
  for (const auto& [key, r] : m_timers)
    if (r.expiration <= now) by_pid[r.pid].push_back(&r);
  std::vector<Reap> out;
  for (auto& [pid, list] : by_pid) {
    std::sort(list.begin(), list.end(), [](auto* a, auto* b) { return a->expiration < b->expiration; });
    auto with_signal = std::find_if(list.begin(), list.end(), [](auto* r) { return r->signal > 0; });
    if (with_signal == list.end()) continue;  // "No signal specified ... Do not reap it"
    out.push_back({pid, (*with_signal)->signal, (*with_signal)->scope, now - (*with_signal)->expiration});
  }
  for (const auto& r : out) clear(r.pid);
  return out;
}

void FileTimers::clear(int pid) {
  for (auto it = m_timers.begin(); it != m_timers.end();) it = it->first.first == pid ? m_timers.erase(it) : std::next(it);
}

}  // namespace hpclaunch
