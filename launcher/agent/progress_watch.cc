#include "agent/progress_watch.h"

#include <algorithm>

namespace hpclaunch {

ProgressWatch::ProgressWatch(ProgressWatchConfig config) : m_config(config) {}

void ProgressWatch::seed(bool reported, std::optional<long long> best) {
  m_reported_before = m_reported_before || reported;
  if (best && (!m_best_before || *best > *m_best_before)) m_best_before = best;
}

void ProgressWatch::start(int nproc, Clock::time_point now) {
  m_reported_before = reports();
  if (m_best && (!m_best_before || *m_best > *m_best_before)) m_best_before = m_best;
  m_best.reset();
  m_reported = false;
  m_start = now;
  m_ranks.assign(static_cast<size_t>(std::max(0, nproc)), Rank{});
}

void ProgressWatch::report(int local_rank, Clock::time_point t, std::optional<long long> step) {
  if (local_rank < 0 || local_rank >= static_cast<int>(m_ranks.size())) return;
  m_ranks[local_rank].report = t;
  m_reported = true;
  if (step && (!m_best || *step > *m_best)) m_best = step;
}

void ProgressWatch::output(int local_rank, Clock::time_point t) {
  if (local_rank < 0 || local_rank >= static_cast<int>(m_ranks.size())) return;
  m_ranks[local_rank].line = t;
}

void ProgressWatch::exited(int local_rank) {
  if (local_rank >= 0 && local_rank < static_cast<int>(m_ranks.size())) m_ranks[local_rank].running = false;
}

std::optional<Hang> ProgressWatch::check(Clock::time_point now) const {
  if (!enabled()) return std::nullopt;
  auto seconds = [](Clock::duration d) { return std::chrono::duration<double>(d).count(); };
  std::optional<Hang> oldest;
  if (reports()) {
    const double startup = m_config.startup_s > 0 ? m_config.startup_s : std::max(m_config.timeout_s, 300.0);
    for (size_t lr = 0; lr < m_ranks.size(); ++lr) {
      const Rank& r = m_ranks[lr];
      if (!r.running) continue;
      const double idle = seconds(now - r.report.value_or(m_start));
      if (idle <= (r.report ? m_config.timeout_s : startup)) continue;
      if (!oldest || idle > oldest->idle_s)
        oldest = Hang{static_cast<int>(lr), idle, "progress", r.report.has_value()};
    }
    return oldest;
  }
  if (!m_config.output) return std::nullopt;
  // Silent: the node is idle when no running worker has printed a line for the timeout; the rank blamed is the
  // one whose last line is oldest.
  Clock::time_point newest = m_start;
  bool any = false;
  for (size_t lr = 0; lr < m_ranks.size(); ++lr) {
    const Rank& r = m_ranks[lr];
    if (!r.running) continue;
    any = true;
    const Clock::time_point last = r.line.value_or(m_start);
    newest = std::max(newest, last);
    const double idle = seconds(now - last);
    if (!oldest || idle > oldest->idle_s) oldest = Hang{static_cast<int>(lr), idle, "output", false};
  }
  if (!any || seconds(now - newest) <= m_config.timeout_s) return std::nullopt;
  return oldest;
}

Hang ProgressWatch::rank_idle(int local_rank, Clock::time_point now) const {
  Hang h{local_rank, 0, reports() ? "progress" : "output", false};
  if (local_rank < 0 || local_rank >= static_cast<int>(m_ranks.size())) return h;
  const Rank& r = m_ranks[local_rank];
  const auto last = reports() ? r.report : r.line;
  h.idle_s = std::chrono::duration<double>(now - last.value_or(m_start)).count();
  h.ever_reported = r.report.has_value();
  return h;
}

Hang ProgressWatch::blame(const Hang& oldest, Clock::time_point seen, const std::vector<RankSigns>& signs) const {
  std::vector<Hang> near;
  for (size_t lr = 0; lr < m_ranks.size() && lr < signs.size(); ++lr) {
    if (!m_ranks[lr].running) continue;
    Hang r = rank_idle(static_cast<int>(lr), seen);
    if (r.idle_s >= oldest.idle_s - 1.5) near.push_back(r);
  }
  for (const auto& r : near)
    if (signs[r.local_rank].stopped_or_blocked) return r;
  for (const auto& r : near)
    if (!signs[r.local_rank].waits_for_peers) return r;
  return oldest;
}

bool ProgressWatch::progressed() const {
  if (!m_reported) return false;
  if (!m_best) return true;  // no steps given: any report is progress
  return !m_best_before || *m_best > *m_best_before;
}

std::optional<long long> ProgressWatch::best_step() const {
  if (m_best && (!m_best_before || *m_best > *m_best_before)) return m_best;
  return m_best_before;
}

}  // namespace hpclaunch
