#include "agent/rendezvous_state.h"

#include <fmt/core.h>

#include <algorithm>

namespace hpclaunch {

namespace {

Reply reply(Reply::Kind kind, ConnId to) {
  Reply r{};
  r.kind = kind;
  r.to = to;
  return r;
}

}  // namespace

std::string describe(const Replacement& r) {
  return fmt::format("round {}: {} (node {}) took the place of {} (node {}) as group rank {}: {}", r.round, r.new_host,
                     r.new_node_rank, r.old_host, r.old_node_rank, r.group_rank, r.why);
}

RendezvousState::RendezvousState(RendezvousConfig config, std::function<int()> pick_port, Clock::time_point now)
    : m_config(std::move(config)),
      m_pick_port(std::move(pick_port)),
      m_round_start(now),
      m_streak(m_config.no_progress_streak),
      m_reports(m_config.reports) {}

void RendezvousState::progress(ConnId c, int round) {
  if (m_phase != Phase::running || round != m_round || !m_participants.count(c)) return;
  m_progressed = true;
  m_reports = true;
}

void RendezvousState::end_attempt() {
  m_streak = m_progressed ? 0 : m_streak + 1;
  m_progressed = false;
}

bool RendezvousState::joined_rank(int node_rank) const {
  auto owner = m_owner.find(node_rank);
  return owner != m_owner.end() && m_joined.count(owner->second);
}

std::vector<size_t> order_by_domain(const std::vector<std::pair<int, std::string>>& nodes) {
  std::map<std::string, int> lowest;  // domain -> its lowest node rank
  for (const auto& [rank, domain] : nodes)
    if (!domain.empty()) {
      auto [it, fresh] = lowest.emplace(domain, rank);
      if (!fresh) it->second = std::min(it->second, rank);
    }
  auto key = [&](size_t i) {
    const auto& [rank, domain] = nodes[i];
    return std::make_pair(domain.empty() ? rank : lowest.at(domain), rank);
  };
  std::vector<size_t> order(nodes.size());
  for (size_t i = 0; i < order.size(); ++i) order[i] = i;
  std::stable_sort(order.begin(), order.end(), [&](size_t a, size_t b) { return key(a) < key(b); });
  return order;
}

std::vector<ConnId> RendezvousState::group_order(std::vector<ConnId> nodes) const {
  std::vector<std::pair<int, std::string>> keys;
  for (ConnId c : nodes) keys.emplace_back(m_joined.at(c).node_rank, m_joined.at(c).domain);
  std::vector<ConnId> out;
  for (size_t i : order_by_domain(keys)) out.push_back(nodes[i]);
  return out;
}

std::vector<Reply> RendezvousState::join(ConnId c, int node_rank, const std::string& host, int nproc,
                                         Clock::time_point now, const std::string& domain) {
  auto refuse = [&](std::string why) {
    Reply r = reply(Reply::refuse, c);
    r.failure.reason = std::move(why);
    return std::vector<Reply>{r};
  };
  if (m_phase == Phase::finished || m_phase == Phase::aborted) return refuse("the job has already ended");
  const int ranks = m_config.max_nodes + m_config.spares;
  if (node_rank == -1) {
    if (auto old = m_agents.find(c); old != m_agents.end()) node_rank = old->second.node_rank;  // a rejoin keeps it
    for (int r = 0; node_rank < 0 && r < ranks; ++r)
      if (r != m_config.anchor_node && !m_owner.count(r)) node_rank = r;
    if (node_rank < 0) return refuse(fmt::format("all {} node ranks are taken", ranks));
  }
  if (node_rank < 0 || node_rank >= ranks) return refuse(fmt::format("node rank {} is outside 0..{}", node_rank, ranks - 1));
  if (nproc < 1) return refuse("a node must run at least one worker");
  // By index, not a scan of every agent: a scan per join is quadratic, seconds at 10,000 nodes.
  if (auto owner = m_owner.find(node_rank); owner != m_owner.end() && owner->second != c)
    return refuse(fmt::format("node rank {} is already taken by {}; run one agent per node", node_rank,
                              m_agents.at(owner->second).host));
  Node node{node_rank, host, nproc, domain};
  if (auto old = m_agents.find(c); old != m_agents.end()) m_owner.erase(old->second.node_rank);
  m_agents[c] = node;
  m_owner[node_rank] = c;
  m_joined[c] = node;
  if (m_phase == Phase::running) {
    // A node that comes late (MIN:MAX closed without it) re-forms the job with it, as TorchElastic does; it is
    // a change of membership, not a failure, so it uses no restart.
    if (static_cast<int>(m_participants.size()) < m_config.max_nodes) return restart(now);
    return {standby_reply(c)};  // a spare: it waits for a place
  }
  return maybe_close(now);
}

bool RendezvousState::designated_joined() const {
  for (int r = 0; r < m_config.max_nodes; ++r)
    if (!joined_rank(r)) return false;
  return true;
}

std::vector<Reply> RendezvousState::maybe_close(Clock::time_point now) {
  int n = static_cast<int>(m_joined.size());
  if (!joined_rank(m_config.anchor_node)) return {};
  if (n >= m_config.max_nodes) {
    if (m_config.spares == 0) return close_round();
    // With spares a round waits for the nodes meant to run, so that no spare takes the place of a node that is
    // only slow to join: in the first round the node ranks below MAX, after a restart the last group's nodes that
    // are still connected and not retired; else for every connected agent or the last call.
    bool ready = true;
    if (m_round == 0) ready = designated_joined();
    for (const auto& [c, node] : m_slots)
      if (m_agents.count(c) && !m_retired.count(c) && !m_joined.count(c)) ready = false;
    if (ready) return close_round();
  }
  if (n < m_config.min_nodes) return {};
  // After a restart everyone still alive is connected: no one else is coming, no need for the last call.
  if (m_round > 0 && n == static_cast<int>(m_agents.size())) return close_round();
  if (!m_last_call) m_last_call = now + m_config.last_call;
  if (now >= *m_last_call) return close_round();
  return {};
}

// The group of the round being closed, in group-rank order. Without spares: every joined node, by node rank.
// With spares: the last group's nodes keep their places; a place whose node is gone (lost, retired, not back in
// time) goes to a waiting spare, lowest node rank first, retired ones last; places no one can take close up; the
// group grows to MAX from the rest. The first round is the nodes by node rank, up to MAX.
std::vector<ConnId> RendezvousState::pick_group() {
  auto by_rank = [this](ConnId a, ConnId b) {
    const bool ra = m_retired.count(a) > 0, rb = m_retired.count(b) > 0;
    if (ra != rb) return rb;
    return m_joined.at(a).node_rank < m_joined.at(b).node_rank;
  };
  std::vector<ConnId> group;
  std::vector<ConnId> fill;
  std::set<ConnId> kept;
  for (const auto& [c, node] : m_slots)
    if (m_joined.count(c) && !m_retired.count(c)) kept.insert(c);
  for (const auto& [c, node] : m_joined)
    if (!kept.count(c)) fill.push_back(c);
  std::sort(fill.begin(), fill.end(), by_rank);
  if (m_slots.empty()) {  // the first group: the retired last, the others by domain
    auto active_end = std::stable_partition(fill.begin(), fill.end(), [this](ConnId c) { return !m_retired.count(c); });
    std::vector<ConnId> active = group_order(std::vector<ConnId>(fill.begin(), active_end));
    std::copy(active.begin(), active.end(), fill.begin());
  }
  size_t next = 0;
  for (size_t slot = 0; slot < m_slots.size(); ++slot) {
    const auto& [old, node] = m_slots[slot];
    if (kept.count(old)) {
      group.push_back(old);
      continue;
    }
    if (next == fill.size()) continue;  // no one to take the place: the group shrinks (MIN allowing)
    const ConnId c = fill[next++];
    if (c != old) {
      const Node& spare = m_joined.at(c);
      auto why = m_left_why.find(old);
      m_replacements.push_back({m_round, static_cast<int>(group.size()), node.host, spare.host, node.node_rank,
                                spare.node_rank,
                                why != m_left_why.end() ? why->second : "it did not rejoin in time"});
    }
    group.push_back(c);
  }
  while (next < fill.size() && static_cast<int>(group.size()) < m_config.max_nodes) group.push_back(fill[next++]);
  m_left_why.clear();
  return group;
}

std::vector<Reply> RendezvousState::close_round() {
  std::vector<ConnId> group;
  if (m_config.spares == 0) {
    for (const auto& [c, n] : m_joined) group.push_back(c);
    group = group_order(group);
  } else {
    group = pick_group();
  }
  int world = 0;
  for (ConnId c : group) world += m_joined.at(c).nproc;
  int port = m_pick_port();
  std::vector<Reply> out;
  int offset = 0;
  m_participants.clear();
  m_slots.clear();
  for (size_t i = 0; i < group.size(); ++i) {
    const Node node = m_joined.at(group[i]);
    Reply r = reply(Reply::assign, group[i]);
    r.assignment = {m_round, static_cast<int>(i), static_cast<int>(group.size()), offset, world,
                    m_restart_count, m_config.master_addr, port, node.node_rank};
    offset += node.nproc;
    out.push_back(r);
    m_participants[group[i]] = node;
    m_slots.emplace_back(group[i], node);
    m_joined.erase(group[i]);
  }
  // Whoever is left waits as a spare, joined for the next round.
  for (const auto& [c, node] : m_joined) out.push_back(standby_reply(c));
  m_done.clear();
  m_last_call.reset();
  m_phase = Phase::running;
  return out;
}

Reply RendezvousState::standby_reply(ConnId c) const {
  Reply r = reply(Reply::standby, c);
  r.failure.reason = m_retired.count(c) ? "retired" : "spare";
  return r;
}

bool RendezvousState::spare_waits() const {
  for (const auto& [c, node] : m_joined)
    if (!m_participants.count(c) && !m_retired.count(c)) return true;
  return false;
}

// A node blamed for a hang (its rank held the others) gives its place to a waiting spare: the node may be what
// hangs (a stalled file system, a GPU that stopped). The store's own node never does: it serves the job.
void RendezvousState::retire_blamed(const Failure& f) {
  if (m_config.spares == 0 || f.hang_s <= 0 || f.rank < 0 || f.node_rank == m_config.anchor_node) return;
  auto owner = m_owner.find(f.node_rank);
  if (owner == m_owner.end() || !m_participants.count(owner->second) || !spare_waits()) return;
  m_retired.insert(owner->second);
  m_left_why[owner->second] = fmt::format("it was blamed for a hang (rank {})", f.rank);
}

std::vector<Reply> RendezvousState::done(ConnId c, int round) {
  if (m_phase != Phase::running || round != m_round || !m_participants.count(c)) return {};
  m_done.insert(c);
  if (m_done.size() < m_participants.size()) return {};
  m_phase = Phase::finished;
  m_streak = 0;
  std::vector<Reply> out;
  for (const auto& [a, n] : m_agents) out.push_back(reply(Reply::finish, a));
  return out;
}

std::vector<Reply> RendezvousState::failed(ConnId c, int round, const Failure& f, Clock::time_point now) {
  // Later failures of the same round are mostly consequences of the first (peers lost their connections).
  if (m_phase != Phase::running || round != m_round || !m_participants.count(c)) return {};
  if (f.hang_s > 0 && m_config.hang_window.count() > 0) {
    // Every node whose workers wait reports its own: the best of them once the window closes (tick).
    if (!m_hang) m_hang_until = now + m_config.hang_window;
    if (!m_hang || better_hang(f, *m_hang)) m_hang = f;
    m_hang_nodes.insert(c);
    if (m_hang_nodes.size() < m_participants.size()) return {};
    return decide(*m_hang, now);  // every node has said where its ranks are
  }
  return decide(f, now);  // a worker that failed outright is the root cause, hangs reported or not
}

std::vector<Reply> RendezvousState::decide(const Failure& failure, Clock::time_point now) {
  const Failure f = failure;  // may be m_hang's, reset here
  m_hang.reset();
  m_hang_nodes.clear();
  end_attempt();
  if (m_reports && m_config.no_progress_limit > 0 && m_streak >= m_config.no_progress_limit) {
    Failure why = f;
    why.no_progress = m_streak;
    return abort(why);
  }
  if (m_restart_count >= m_config.max_restarts) return abort(f);
  ++m_restart_count;
  retire_blamed(f);
  return restart(now);
}

std::vector<Reply> RendezvousState::restart(Clock::time_point now) {
  m_hang.reset();
  m_hang_nodes.clear();
  std::vector<Reply> out;
  ++m_round;
  for (const auto& [a, n] : m_participants) {
    Reply r = reply(Reply::restart, a);
    r.round = m_round;
    out.push_back(r);
  }
  m_participants.clear();
  m_done.clear();
  m_phase = Phase::joining;
  m_round_start = now;
  m_last_call.reset();
  // Those who joined while the round ran stay joined for this one.
  return out;
}

std::vector<Reply> RendezvousState::abort(const Failure& why) {
  m_hang.reset();
  m_hang_nodes.clear();
  m_phase = Phase::aborted;
  std::vector<Reply> out;
  for (const auto& [a, n] : m_agents) {
    Reply r = reply(Reply::abort, a);
    r.failure = why;
    out.push_back(r);
  }
  return out;
}

std::string RendezvousState::who(ConnId c) const {
  auto it = m_agents.find(c);
  if (it == m_agents.end()) return "an agent";
  return fmt::format("the agent on {} (node {})", it->second.host, it->second.node_rank);
}

std::vector<Reply> RendezvousState::lost(ConnId c, Clock::time_point now) {
  auto it = m_agents.find(c);
  if (it == m_agents.end()) return {};
  Node node = it->second;
  m_agents.erase(it);
  m_owner.erase(node.node_rank);
  m_joined.erase(c);
  m_retired.erase(c);
  m_left_why[c] = "its agent was lost";
  if (m_phase == Phase::finished || m_phase == Phase::aborted) return {};
  Failure why;
  why.host = node.host;
  why.node_rank = node.node_rank;
  why.node_lost = true;
  int alive = static_cast<int>(m_agents.size());
  if (m_phase == Phase::running && m_participants.erase(c)) {
    if (alive < m_config.min_nodes || node.node_rank == m_config.anchor_node) {
      why.reason = fmt::format("the agent on {} (node {}) was lost; {} of at least {} nodes remain", node.host,
                               node.node_rank, alive, m_config.min_nodes);
      return abort(why);
    }
    // A change of membership, not a worker failure: it does not use up a restart (as in TorchElastic).
    end_attempt();
    return restart(now);
  }
  if (m_round > 0 && alive < m_config.min_nodes) {
    why.reason = fmt::format("the agent on {} (node {}) was lost while re-forming the job; {} of at least {} "
                             "nodes remain", node.host, node.node_rank, alive, m_config.min_nodes);
    return abort(why);
  }
  return maybe_close(now);
}

std::vector<std::string> RendezvousState::standby() const {
  std::vector<std::string> out;
  for (const auto& [c, node] : m_joined)
    if (!m_participants.count(c))
      out.push_back(fmt::format("{} (node {}){}", node.host, node.node_rank, m_retired.count(c) ? ", retired" : ""));
  return out;
}

std::vector<Reply> RendezvousState::shutdown(ConnId, const Failure& why) {
  if (m_phase == Phase::finished || m_phase == Phase::aborted) return {};
  Failure f = why;
  if (m_phase == Phase::running) {
    end_attempt();  // a requeued job counts on from here
    // A worker that asks for a requeue (exit 99) again and again without progress: stopped, not requeued.
    if (m_reports && m_config.no_progress_limit > 0 && m_streak >= m_config.no_progress_limit) f.no_progress = m_streak;
  }
  return abort(f);
}

std::vector<Reply> RendezvousState::tick(Clock::time_point now) {
  if (m_phase == Phase::running && m_hang && now >= m_hang_until) return decide(*m_hang, now);
  if (m_phase != Phase::joining) return {};
  auto out = maybe_close(now);
  if (!out.empty() || now < m_round_start + m_config.join_timeout) return out;
  Failure why;
  why.reason = fmt::format("rendezvous timed out: {} of at least {} nodes joined round {} in {} s",
                           m_joined.size(), m_config.min_nodes, m_round,
                           std::chrono::duration_cast<std::chrono::seconds>(m_config.join_timeout).count());
  return abort(why);
}

std::optional<Clock::time_point> RendezvousState::deadline() const {
  if (m_phase == Phase::running && m_hang) return m_hang_until;
  if (m_phase != Phase::joining) return std::nullopt;
  auto t = m_round_start + m_config.join_timeout;
  if (m_last_call) t = std::min(t, *m_last_call);
  return t;
}

}  // namespace hpclaunch
