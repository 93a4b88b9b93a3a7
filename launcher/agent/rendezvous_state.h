// The rendezvous as the node-0 agent's store keeps it: who joined, when a round closes (MAX nodes, or MIN after
// the last call), which node gets which group rank, and what a failure, a lost agent or a signal does to the
// job (restart while restarts remain, else abort). Pure: no sockets; time is passed in, replies are returned.
#pragma once
#include <chrono>
#include <cstdint>
#include <functional>
#include <map>
#include <optional>
#include <set>
#include <string>
#include <vector>

#include "agent/failure.h"

namespace hpclaunch {

using Clock = std::chrono::steady_clock;
using ConnId = std::uint64_t;

struct RendezvousConfig {
  int min_nodes = 1;
  int max_nodes = 1;
  int max_restarts = 0;
  Clock::duration last_call = std::chrono::seconds(30);
  Clock::duration join_timeout = std::chrono::seconds(600);
  std::string master_addr;
  int anchor_node = 0;  // the store's own node: always group rank 0, so RANK 0 runs where MASTER_PORT is free
  // No progress, no requeue: after this many attempts in a row without progress (a node's `progress` message) a
  // failure stops the job instead of restarting it (Failure::no_progress), restarts left or not. 0: never. The
  // rule holds only a program that reports progress; a silent one ends at max_restarts as before.
  int no_progress_limit = 0;
  int no_progress_streak = 0;  // attempts without progress before this run (a requeued job's, from JOBDIR)
  bool reports = false;        // the program reported progress in an earlier run of the job
  // A hang is reported by every node whose workers wait, each naming its own rank: the store waits for every node
  // of the round, or this long after the first, and takes the one that names the rank holding them (better_hang).
  // Recording the stacks took seconds on a loaded 2-core machine: a node's report came 2 s after another's.
  Clock::duration hang_window = std::chrono::seconds(5);
  // Spare nodes (--spares): up to this many agents beyond max_nodes (node ranks up to max_nodes + spares - 1) join
  // and wait, holding no workers. When a node of the running round is lost, or is blamed for a hang while a spare
  // waits, a spare takes its group rank in the next round; the other nodes keep theirs. A node blamed for a hang
  // stays connected, retired: it runs workers again only if no other node is left to take its place.
  int spares = 0;
};

// The order of nodes (node rank, NVLink domain; "" none) that keeps each domain's nodes on contiguous group ranks:
// the domains in the order of their lowest node rank, by node rank within one; a node without a domain is a domain
// of its own. Returns indexes into `nodes`. As NVIDIA's ft_launcher --ft-segment: tensor- and expert-parallel groups
// of consecutive ranks stay inside one rack.
std::vector<size_t> order_by_domain(const std::vector<std::pair<int, std::string>>& nodes);

// A spare that took the place of a node, as `hpclaunch status` shows it (JOBDIR/nodes.json).
struct Replacement {
  int round = 0;  // the first round the spare ran in
  int group_rank = 0;
  std::string old_host, new_host;
  int old_node_rank = -1, new_node_rank = -1;
  std::string why;  // "its agent was lost", "it was blamed for a hang"
};
// "round 1: n4 (node 3) took the place of n2 (node 1) as group rank 1: its agent was lost"
std::string describe(const Replacement& r);

// What one node runs in one round.
struct Assignment {
  int round = 0;
  int group_rank = 0;
  int group_world_size = 0;
  int rank_offset = 0;  // RANK of this node's LOCAL_RANK 0
  int world_size = 0;
  int restart_count = 0;
  std::string master_addr;
  int master_port = 0;
  int node_rank = 0;  // the node's, as the store knows it (numbered by the store for an agent that joined without)
};

struct Reply {
  // standby: the node waits as a spare (failure.reason says why: "spare", or retired after a hang).
  enum Kind { assign, restart, abort, finish, refuse, standby } kind;
  ConnId to = 0;
  Assignment assignment;  // assign
  int round = 0;          // restart: the round to join next
  Failure failure;        // abort: the root cause; refuse: failure.reason
};

class RendezvousState {
 public:
  enum class Phase { joining, running, finished, aborted };

  RendezvousState(RendezvousConfig config, std::function<int()> pick_port, Clock::time_point now);

  // node_rank -1: the store gives the agent the lowest free node rank above the anchor's (torchrun's c10d numbering).
  // `domain`: the node's NVLink domain (runtime/nvlink_fabric.h; "" none): the group ranks keep each domain's
  // nodes together (group_order).
  std::vector<Reply> join(ConnId c, int node_rank, const std::string& host, int nproc, Clock::time_point now,
                          const std::string& domain = "");
  // Every worker of the node's group exited 0 in `round`.
  std::vector<Reply> done(ConnId c, int round);
  std::vector<Reply> failed(ConnId c, int round, const Failure& f, Clock::time_point now);
  // A node's workers made progress in `round` (agent/progress_watch.h's rule).
  void progress(ConnId c, int round);
  std::vector<Reply> lost(ConnId c, Clock::time_point now);
  // An agent stops the job on purpose (it got SIGTERM...): everyone stops, no restart.
  std::vector<Reply> shutdown(ConnId c, const Failure& why);
  std::vector<Reply> tick(Clock::time_point now);
  // When tick() next has something to do; nullopt: nothing timed is pending.
  std::optional<Clock::time_point> deadline() const;

  Phase phase() const { return m_phase; }
  int round() const { return m_round; }
  int restart_count() const { return m_restart_count; }
  size_t agents() const { return m_agents.size(); }
  // Attempts in a row that ended without progress, the running one not counted; whether the program reports.
  int no_progress_streak() const { return m_streak; }
  bool reports() const { return m_reports; }
  // "the agent on HOST (node N)" for a connection that joined, else "an agent": what the store's log names.
  std::string who(ConnId c) const;
  // The spares waiting now ("host (node N)", retired ones marked) and every replacement so far, oldest first.
  std::vector<std::string> standby() const;
  const std::vector<Replacement>& replacements() const { return m_replacements; }

 private:
  struct Node {
    int node_rank;
    std::string host;
    int nproc;
    std::string domain;
  };
  // Node order for group ranks: by node rank, except that the nodes of one NVLink domain stay together, the domains
  // in the order of their lowest node rank (the anchor's first).
  std::vector<ConnId> group_order(std::vector<ConnId> nodes) const;
  std::vector<Reply> maybe_close(Clock::time_point now);
  std::vector<Reply> close_round();
  std::vector<Reply> restart(Clock::time_point now);
  std::vector<Reply> abort(const Failure& why);
  std::vector<Reply> decide(const Failure& f, Clock::time_point now);
  bool joined_rank(int node_rank) const;
  bool designated_joined() const;
  void end_attempt();
  std::vector<ConnId> pick_group();
  bool spare_waits() const;
  void retire_blamed(const Failure& f);
  Reply standby_reply(ConnId c) const;  // "spare", or "retired" for a node blamed for a hang

  RendezvousConfig m_config;
  std::function<int()> m_pick_port;
  Phase m_phase = Phase::joining;
  int m_round = 0;
  int m_restart_count = 0;
  Clock::time_point m_round_start;
  std::optional<Clock::time_point> m_last_call;
  std::map<ConnId, Node> m_agents;        // every connected agent that has joined once
  std::map<int, ConnId> m_owner;          // node rank -> its agent in m_agents
  std::map<ConnId, Node> m_joined;        // joined the round being formed
  std::map<ConnId, Node> m_participants;  // in the running round
  std::set<ConnId> m_done;
  bool m_progressed = false;  // in the running round
  std::optional<Failure> m_hang;  // the best hang reported in the running round, while the window is open
  std::set<ConnId> m_hang_nodes;  // the nodes that reported it
  Clock::time_point m_hang_until{};
  int m_streak = 0;
  bool m_reports = false;
  // Spares: the running round's group in rank order (kept as a slot table, so that a spare can take a lost node's
  // group rank), why each node left it, the retired nodes and the replacements made.
  std::vector<std::pair<ConnId, Node>> m_slots;
  std::map<ConnId, std::string> m_left_why;
  std::set<ConnId> m_retired;
  std::vector<Replacement> m_replacements;
};

}  // namespace hpclaunch
