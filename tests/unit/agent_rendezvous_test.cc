#include <doctest/doctest.h>

#include "agent/rendezvous_state.h"

namespace agent_rendezvous_test {  // this file's names, apart from its unity batch's others (tests/CMakeLists.txt)

using namespace hpclaunch;
using namespace std::chrono_literals;

namespace {

RendezvousConfig config(int min, int max, int restarts = 0) {
  RendezvousConfig c;
  c.min_nodes = min;
  c.max_nodes = max;
  c.max_restarts = restarts;
  c.last_call = 10s;
  c.join_timeout = 60s;
  c.master_addr = "n1";
  return c;
}

int port_counter() {
  static int p = 30000;
  return ++p;
}

const Reply* to(const std::vector<Reply>& rs, ConnId c) {
  for (const auto& r : rs)
    if (r.to == c) return &r;
  return nullptr;
}

}  // namespace

TEST_SUITE_BEGIN("agent rendezvous");

TEST_CASE("a round closes when MAX nodes joined and ranks follow node ranks, not join order") {
  auto t0 = Clock::now();
  RendezvousState s(config(3, 3), port_counter, t0);
  CHECK(s.join(10, 0, "n1", 2, t0).empty());
  CHECK(s.join(12, 2, "n3", 4, t0).empty());
  auto rs = s.join(11, 1, "n2", 2, t0);
  REQUIRE(rs.size() == 3);
  CHECK(s.phase() == RendezvousState::Phase::running);
  CHECK(to(rs, 10)->assignment.group_rank == 0);
  CHECK(to(rs, 11)->assignment.group_rank == 1);
  CHECK(to(rs, 11)->assignment.rank_offset == 2);
  CHECK(to(rs, 12)->assignment.group_rank == 2);
  CHECK(to(rs, 12)->assignment.rank_offset == 4);
  CHECK(to(rs, 12)->assignment.world_size == 8);
  CHECK(to(rs, 12)->assignment.group_world_size == 3);
  CHECK(to(rs, 10)->assignment.master_port == to(rs, 12)->assignment.master_port);
  CHECK(to(rs, 10)->assignment.master_addr == "n1");
}

TEST_CASE("NVLink domains: each domain's nodes on contiguous group ranks, domains by their lowest node rank") {
  // order_by_domain, pure: two racks interleaved by the scheduler's node order (n0 A, n1 B, n2 A, n3 B), a node
  // without a domain among them.
  CHECK(order_by_domain({{0, "A"}, {1, "B"}, {2, "A"}, {3, "B"}}) == std::vector<size_t>{0, 2, 1, 3});
  CHECK(order_by_domain({{0, ""}, {1, "B"}, {2, ""}, {3, "B"}}) == std::vector<size_t>{0, 1, 3, 2});
  CHECK(order_by_domain({{3, "B"}, {0, "A"}, {2, "A"}, {1, "B"}}) == std::vector<size_t>{1, 2, 3, 0});
  CHECK(order_by_domain({{0, ""}, {1, ""}, {2, ""}}) == std::vector<size_t>{0, 1, 2});
  // The store: the agents' joins carry their domains; RANKs follow the group ranks, so ranks 0-3 are in rack A.
  auto t0 = Clock::now();
  RendezvousState s(config(4, 4), port_counter, t0);
  CHECK(s.join(10, 0, "n1", 2, t0, "A").empty());
  CHECK(s.join(11, 1, "n2", 2, t0, "B").empty());
  CHECK(s.join(12, 2, "n3", 2, t0, "A").empty());
  auto rs = s.join(13, 3, "n4", 2, t0, "B");
  REQUIRE(rs.size() == 4);
  CHECK(to(rs, 10)->assignment.group_rank == 0);  // the anchor keeps group rank 0
  CHECK(to(rs, 12)->assignment.group_rank == 1);
  CHECK(to(rs, 12)->assignment.rank_offset == 2);
  CHECK(to(rs, 11)->assignment.group_rank == 2);
  CHECK(to(rs, 13)->assignment.group_rank == 3);
  CHECK(to(rs, 12)->assignment.node_rank == 2);  // the node's own rank is unchanged
}

TEST_CASE("MIN:MAX closes with MIN nodes only after the last call") {
  auto t0 = Clock::now();
  RendezvousState s(config(2, 4), port_counter, t0);
  CHECK(s.join(1, 0, "n1", 1, t0).empty());
  CHECK(s.join(2, 1, "n2", 1, t0 + 1s).empty());
  CHECK(s.deadline() == t0 + 11s);
  CHECK(s.tick(t0 + 5s).empty());
  auto rs = s.tick(t0 + 11s);
  CHECK(rs.size() == 2);
  CHECK(to(rs, 2)->assignment.world_size == 2);
}

TEST_CASE("the round waits for the store's own node even when MAX others joined") {
  auto t0 = Clock::now();
  RendezvousState s(config(2, 2), port_counter, t0);
  CHECK(s.join(2, 1, "n2", 1, t0).empty());
  CHECK(s.tick(t0 + 30s).empty());
  CHECK(s.join(1, 0, "n1", 1, t0 + 31s).size() == 2);
}

TEST_CASE("a second agent claiming a node rank is refused, and so is a rank beyond MAX") {
  auto t0 = Clock::now();
  RendezvousState s(config(2, 2), port_counter, t0);
  s.join(1, 0, "n1", 1, t0);
  auto rs = s.join(2, 0, "n2", 1, t0);
  REQUIRE(rs.size() == 1);
  CHECK(rs[0].kind == Reply::refuse);
  CHECK(rs[0].failure.reason.find("already taken") != std::string::npos);
  rs = s.join(3, 5, "n3", 1, t0);
  REQUIRE(rs.size() == 1);
  CHECK(rs[0].kind == Reply::refuse);
}

TEST_CASE("a node rank is free again once its agent is lost, and its owner's refusal names the owner") {
  auto t0 = Clock::now();
  RendezvousState s(config(2, 2), port_counter, t0);
  s.join(1, 0, "n1", 1, t0);
  s.join(2, 1, "n2", 1, t0);
  auto rs = s.join(3, 1, "n3", 1, t0);  // the round is running: rank 1 is n2's
  REQUIRE(rs.size() == 1);
  CHECK(rs[0].failure.reason == "node rank 1 is already taken by n2; run one agent per node");
  s.lost(2, t0 + 1s);  // below MIN: the job aborts, but the rank index must forget n2 either way
  RendezvousState t(config(1, 2), port_counter, t0);
  t.join(1, 0, "n1", 1, t0);
  t.join(2, 1, "n2", 1, t0);
  t.lost(2, t0 + 1s);   // MIN still met: a restart round
  CHECK(t.join(3, 1, "n3", 1, t0 + 2s).empty());  // a new agent takes the lost one's rank
  rs = t.join(1, 0, "n1", 1, t0 + 2s);              // the same agent re-joins with its own rank: not refused
  REQUIRE(rs.size() == 2);
  CHECK(to(rs, 3)->kind == Reply::assign);
  CHECK(to(rs, 3)->assignment.group_rank == 1);
}

TEST_CASE("a worker failure restarts everyone while restarts remain, then aborts with that failure") {
  auto t0 = Clock::now();
  RendezvousState s(config(2, 2, 1), port_counter, t0);
  s.join(1, 0, "n1", 1, t0);
  s.join(2, 1, "n2", 1, t0);
  Failure f;
  f.host = "n2";
  f.rank = 1;
  f.exit_code = 1;
  auto rs = s.failed(2, 0, f, t0 + 1s);
  REQUIRE(rs.size() == 2);
  CHECK(rs[0].kind == Reply::restart);
  CHECK(rs[0].round == 1);
  CHECK(s.restart_count() == 1);
  CHECK(s.failed(1, 0, f, t0 + 1s).empty());  // a late report from the old round changes nothing
  s.join(1, 0, "n1", 1, t0 + 2s);
  rs = s.join(2, 1, "n2", 1, t0 + 2s);  // everyone alive re-joined: no last call needed
  REQUIRE(rs.size() == 2);
  CHECK(rs[0].assignment.restart_count == 1);
  CHECK(rs[0].assignment.round == 1);
  rs = s.failed(1, 1, f, t0 + 3s);
  REQUIRE(rs.size() == 2);
  CHECK(rs[0].kind == Reply::abort);
  CHECK(rs[0].failure.rank == 1);
  CHECK(s.phase() == RendezvousState::Phase::aborted);
}

TEST_CASE("the job finishes only when every node of the round is done") {
  auto t0 = Clock::now();
  RendezvousState s(config(2, 2), port_counter, t0);
  s.join(1, 0, "n1", 1, t0);
  s.join(2, 1, "n2", 1, t0);
  CHECK(s.done(1, 0).empty());
  CHECK(s.done(1, 0).empty());
  auto rs = s.done(2, 0);
  REQUIRE(rs.size() == 2);
  CHECK(rs[0].kind == Reply::finish);
}

TEST_CASE("a lost agent aborts when fewer than MIN nodes remain") {
  auto t0 = Clock::now();
  RendezvousState s(config(2, 2, 3), port_counter, t0);
  s.join(1, 0, "n1", 1, t0);
  s.join(2, 1, "n2", 1, t0);
  auto rs = s.lost(2, t0 + 1s);
  REQUIRE(rs.size() == 1);
  CHECK(rs[0].kind == Reply::abort);
  CHECK(rs[0].to == 1);
  CHECK(rs[0].failure.reason.find("n2 (node 1) was lost") != std::string::npos);
  CHECK(rs[0].failure.node_lost);  // the node's fault: a requeue leaves n2 out
  CHECK(faulty_node(rs[0].failure) == "n2");
}

TEST_CASE("a lost agent with MIN still met re-forms the job without using a restart") {
  auto t0 = Clock::now();
  RendezvousState s(config(2, 3), port_counter, t0);
  s.join(1, 0, "n1", 1, t0);
  s.join(2, 1, "n2", 1, t0);
  s.join(3, 2, "n3", 1, t0);
  CHECK(s.who(3) == "the agent on n3 (node 2)");  // what the store logs when it drops it
  auto rs = s.lost(3, t0 + 1s);
  CHECK(s.who(3) == "an agent");
  REQUIRE(rs.size() == 2);
  CHECK(rs[0].kind == Reply::restart);
  s.join(1, 0, "n1", 1, t0 + 2s);
  rs = s.join(2, 1, "n2", 1, t0 + 2s);
  REQUIRE(rs.size() == 2);
  CHECK(rs[0].assignment.world_size == 2);
  CHECK(rs[0].assignment.restart_count == 0);
}

TEST_CASE("a shutdown (a signal to one agent) aborts everyone without a restart") {
  auto t0 = Clock::now();
  RendezvousState s(config(2, 2, 5), port_counter, t0);
  s.join(1, 0, "n1", 1, t0);
  s.join(2, 1, "n2", 1, t0);
  Failure why;
  why.reason = "the agent on n2 (node 1) got SIGTERM";
  auto rs = s.shutdown(2, why);
  REQUIRE(rs.size() == 2);
  CHECK(rs[1].kind == Reply::abort);
  CHECK(rs[1].failure.reason == why.reason);
}

TEST_CASE("a round that never fills times out with a reason") {
  auto t0 = Clock::now();
  RendezvousState s(config(2, 2), port_counter, t0);
  s.join(1, 0, "n1", 1, t0);
  CHECK(s.tick(t0 + 59s).empty());
  auto rs = s.tick(t0 + 60s);
  REQUIRE(rs.size() == 1);
  CHECK(rs[0].kind == Reply::abort);
  CHECK(rs[0].failure.reason == "rendezvous timed out: 1 of at least 2 nodes joined round 0 in 60 s");
}

TEST_CASE("a node that comes after a MIN:MAX round closed re-forms the job with it, using no restart") {
  auto t0 = Clock::now();
  RendezvousState s(config(1, 2), port_counter, t0);
  s.join(1, 0, "n1", 2, t0);
  REQUIRE(s.tick(t0 + 10s).size() == 1);  // last call: node 0 alone
  auto rs = s.join(2, 1, "n2", 2, t0 + 20s);
  REQUIRE(rs.size() == 1);
  CHECK(rs[0].kind == Reply::restart);
  CHECK(rs[0].to == 1);
  rs = s.join(1, 0, "n1", 2, t0 + 21s);
  REQUIRE(rs.size() == 2);
  CHECK(to(rs, 2)->assignment.world_size == 4);
  CHECK(to(rs, 2)->assignment.group_rank == 1);
  CHECK(to(rs, 2)->assignment.restart_count == 0);
}

}  // namespace agent_rendezvous_test

namespace agent_rendezvous_test {

TEST_CASE("no progress, no requeue: K attempts in a row without progress stop a job that reports progress") {
  auto t0 = Clock::now();
  RendezvousConfig c = config(2, 2, 10);
  c.no_progress_limit = 3;
  RendezvousState s(c, port_counter, t0);
  Failure f;
  f.host = "n2";
  f.rank = 1;
  f.exit_code = 1;
  auto round = [&](bool progress) {
    s.join(1, 0, "n1", 1, t0);
    auto rs = s.join(2, 1, "n2", 1, t0);
    REQUIRE(rs.size() == 2);
    if (progress) s.progress(2, s.round());
    s.progress(3, s.round());  // not a participant: ignored
    return s.failed(1, s.round(), f, t0);
  };
  CHECK(round(true)[0].kind == Reply::restart);  // attempt 0 progressed: the program reports
  CHECK(s.reports());
  CHECK(s.no_progress_streak() == 0);
  CHECK(round(false)[0].kind == Reply::restart);
  CHECK(round(true)[0].kind == Reply::restart);  // progress again: the count starts over
  CHECK(s.no_progress_streak() == 0);
  CHECK(round(false)[0].kind == Reply::restart);
  CHECK(round(false)[0].kind == Reply::restart);
  CHECK(s.no_progress_streak() == 2);
  auto rs = round(false);
  REQUIRE(rs.size() == 2);
  CHECK(rs[0].kind == Reply::abort);  // 3 in a row, with 5 restarts left
  CHECK(rs[0].failure.no_progress == 3);
  CHECK(rs[0].failure.rank == 1);
  CHECK(s.restart_count() == 5);
}

TEST_CASE("no progress: a program that never reported ends at max_restarts as before; a requeue counts on") {
  auto t0 = Clock::now();
  RendezvousConfig c = config(1, 1, 4);
  c.no_progress_limit = 2;
  Failure f;
  f.rank = 0;
  f.exit_code = 1;
  RendezvousState silent(c, port_counter, t0);
  for (int i = 0; i < 4; ++i) {
    silent.join(1, 0, "n1", 1, t0);
    CHECK(silent.failed(1, silent.round(), f, t0)[0].kind == Reply::restart);
  }
  CHECK(silent.no_progress_streak() == 4);
  CHECK_FALSE(silent.reports());
  silent.join(1, 0, "n1", 1, t0);
  auto rs = silent.failed(1, silent.round(), f, t0);
  CHECK(rs[0].kind == Reply::abort);
  CHECK(rs[0].failure.no_progress == 0);  // out of restarts, not judged

  // A requeued run of a program that reports, after one attempt without progress: one more is the second.
  c.no_progress_streak = 1;
  c.reports = true;
  RendezvousState requeued(c, port_counter, t0);
  requeued.join(1, 0, "n1", 1, t0);
  rs = requeued.failed(1, 0, f, t0);
  CHECK(rs[0].kind == Reply::abort);
  CHECK(rs[0].failure.no_progress == 2);

  // A shutdown (the time limit's signal) ends an attempt too: what the next run starts from.
  c.no_progress_streak = 0;
  RendezvousState stopped(c, port_counter, t0);
  stopped.join(1, 0, "n1", 1, t0);
  stopped.shutdown(1, f);
  CHECK(stopped.no_progress_streak() == 1);
  RendezvousState done(c, port_counter, t0);
  done.join(1, 0, "n1", 1, t0);
  done.done(1, 0);
  CHECK(done.no_progress_streak() == 0);
}

}  // namespace agent_rendezvous_test

namespace agent_rendezvous_test {

TEST_CASE("hangs: the store waits a moment for every node's report and takes the one naming the rank that holds") {
  auto t0 = Clock::now();
  RendezvousState s(config(3, 3, 1), port_counter, t0);
  s.join(1, 0, "n1", 2, t0);
  s.join(2, 1, "n2", 2, t0);
  s.join(3, 2, "n3", 2, t0);
  auto hang = [](const char* host, int rank, double seconds, bool stopped, bool waits) {
    Failure f;
    f.host = host;
    f.rank = rank;
    f.hang_s = seconds;
    f.hang_stopped = stopped;
    f.hang_waits_for_peers = waits;
    return f;
  };
  CHECK(s.failed(1, 0, hang("n1", 0, 10.5, false, true), t0 + 10s).empty());  // the window opens
  CHECK(s.deadline() == t0 + 15s);
  CHECK(s.failed(3, 0, hang("n3", 5, 10, false, false), t0 + 11s).empty());  // elsewhere, not in a collective
  CHECK(s.tick(t0 + 11s).empty());
  auto rs = s.failed(2, 0, hang("n2", 2, 9, true, true), t0 + 11s);  // stopped: the best; every node has spoken
  REQUIRE(rs.size() == 3);
  CHECK(rs[0].kind == Reply::restart);
  CHECK(s.restart_count() == 1);
  CHECK(s.phase() == RendezvousState::Phase::joining);
  // Out of restarts: the abort names the best hang of the window.
  for (ConnId c : {1, 2, 3}) s.join(c, static_cast<int>(c) - 1, "n" + std::to_string(c), 2, t0 + 20s);
  CHECK(s.failed(1, 1, hang("n1", 0, 30, false, true), t0 + 30s).empty());
  CHECK(s.failed(3, 1, hang("n3", 5, 10, false, false), t0 + 30s).empty());
  CHECK(s.tick(t0 + 34s).empty());  // n2 has not said: the window's 5 s
  rs = s.tick(t0 + 35s);
  REQUIRE(rs.size() == 3);
  CHECK(rs[0].kind == Reply::abort);
  CHECK(rs[0].failure.host == "n3");  // not waiting for its peers, though newer
}

TEST_CASE("hangs: a worker that fails outright during the window is the root cause at once") {
  auto t0 = Clock::now();
  RendezvousState s(config(2, 2, 0), port_counter, t0);
  s.join(1, 0, "n1", 1, t0);
  s.join(2, 1, "n2", 1, t0);
  Failure h;
  h.rank = 0;
  h.hang_s = 12;
  CHECK(s.failed(1, 0, h, t0).empty());
  Failure crash;
  crash.rank = 1;
  crash.exit_code = 1;
  auto rs = s.failed(2, 0, crash, t0 + 1s);
  REQUIRE(rs.size() == 2);
  CHECK(rs[0].kind == Reply::abort);
  CHECK(rs[0].failure.rank == 1);
  CHECK(s.tick(t0 + 5s).empty());
  CHECK(better_hang(h, crash));  // a longer hang than nothing
}

}  // namespace agent_rendezvous_test

namespace agent_rendezvous_test {

TEST_CASE("no progress: a worker's requeue (a shutdown) after K attempts without progress is marked, not requeued") {
  auto t0 = Clock::now();
  RendezvousConfig c = config(1, 1, 0);
  c.no_progress_limit = 2;
  c.no_progress_streak = 1;  // the run before this one made none
  c.reports = true;
  RendezvousState s(c, port_counter, t0);
  s.join(1, 0, "n1", 1, t0);
  Failure f;
  f.rank = 0;
  f.exit_code = 99;
  auto rs = s.shutdown(1, f);
  REQUIRE(rs.size() == 1);
  CHECK(rs[0].failure.no_progress == 2);
  CHECK(rs[0].failure.exit_code == 99);
  // With progress in the attempt, the requeue is left as it is.
  c.no_progress_streak = 5;
  RendezvousState p(c, port_counter, t0);
  p.join(1, 0, "n1", 1, t0);
  p.progress(1, 0);
  CHECK(p.shutdown(1, f)[0].failure.no_progress == 0);
  CHECK(p.no_progress_streak() == 0);
}

}  // namespace agent_rendezvous_test

namespace agent_rendezvous_test {

namespace {

RendezvousConfig with_spares(int nodes, int spares, int restarts = 0) {
  RendezvousConfig c = config(nodes, nodes, restarts);
  c.spares = spares;
  return c;
}

const Reply* of_kind(const std::vector<Reply>& rs, ConnId c, Reply::Kind kind) {
  for (const auto& r : rs)
    if (r.to == c && r.kind == kind) return &r;
  return nullptr;
}

// Node ranks 0..n-1 on hosts n1..n(n), connection i+1 for node rank i, one worker each.
RendezvousState formed(RendezvousConfig c, int agents, Clock::time_point t0, std::vector<Reply>* out = nullptr) {
  RendezvousState s(c, port_counter, t0);
  std::vector<Reply> all;
  for (int i = 0; i < agents; ++i) {
    auto rs = s.join(static_cast<ConnId>(i + 1), i, "n" + std::to_string(i + 1), 1, t0);
    all.insert(all.end(), rs.begin(), rs.end());
  }
  if (out) *out = all;
  return s;
}

Failure hang_of(int node_rank, int rank) {
  Failure h;
  h.host = "n" + std::to_string(node_rank + 1);
  h.node_rank = node_rank;
  h.rank = rank;
  h.local_rank = 0;
  h.hang_s = 12;
  h.hang_source = "progress";
  return h;
}

}  // namespace

TEST_CASE("spares: node ranks beyond MAX join and wait, holding no workers; the group is the first MAX") {
  auto t0 = Clock::now();
  std::vector<Reply> rs;
  RendezvousState s = formed(with_spares(2, 1), 3, t0, &rs);
  CHECK(s.phase() == RendezvousState::Phase::running);
  CHECK(of_kind(rs, 1, Reply::assign)->assignment.group_rank == 0);
  CHECK(of_kind(rs, 2, Reply::assign)->assignment.group_rank == 1);
  CHECK(of_kind(rs, 2, Reply::assign)->assignment.world_size == 2);
  CHECK(of_kind(rs, 3, Reply::assign) == nullptr);
  REQUIRE(of_kind(rs, 3, Reply::standby) != nullptr);  // told, once it has joined
  CHECK(of_kind(rs, 3, Reply::standby)->failure.reason == "spare");
  CHECK(s.standby() == std::vector<std::string>{"n3 (node 2)"});
  // A rank beyond MAX + spares is still refused.
  auto refused = s.join(9, 3, "n4", 1, t0);
  REQUIRE(refused.size() == 1);
  CHECK(refused[0].kind == Reply::refuse);
  CHECK(refused[0].failure.reason == "node rank 3 is outside 0..2");
}

TEST_CASE("spares: a spare that joins first does not take the place of a node meant to run, unless it never comes") {
  auto t0 = Clock::now();
  RendezvousState s(with_spares(2, 1), port_counter, t0);
  CHECK(s.join(3, 2, "n3", 1, t0).empty());
  CHECK(s.join(1, 0, "n1", 1, t0).empty());  // MAX joined, but node 1 is not among them: waits
  auto rs = s.join(2, 1, "n2", 1, t0 + 1s);
  CHECK(of_kind(rs, 2, Reply::assign)->assignment.group_rank == 1);
  CHECK(of_kind(rs, 3, Reply::standby) != nullptr);
  // Node 1 never comes: the last call closes the round with the spare in its place.
  RendezvousState late(with_spares(2, 1), port_counter, t0);
  late.join(3, 2, "n3", 1, t0);
  late.join(1, 0, "n1", 1, t0);
  CHECK(late.deadline() == t0 + 10s);
  auto closed = late.tick(t0 + 10s);
  REQUIRE(of_kind(closed, 3, Reply::assign) != nullptr);
  CHECK(of_kind(closed, 3, Reply::assign)->assignment.group_rank == 1);
}

TEST_CASE("spares: a lost node's place goes to a spare, the others keep theirs, and no restart is used") {
  auto t0 = Clock::now();
  RendezvousState s = formed(with_spares(3, 2), 5, t0);  // nodes 0-2 run, 3 and 4 wait
  auto rs = s.lost(2, t0 + 1s);                          // node 1 (n2) is lost
  CHECK(of_kind(rs, 1, Reply::restart) != nullptr);
  CHECK(of_kind(rs, 3, Reply::restart) != nullptr);
  CHECK(of_kind(rs, 4, Reply::restart) == nullptr);  // the spares were not running: nothing to restart
  CHECK(s.join(1, 0, "n1", 1, t0 + 2s).empty());   // node 2 (n3) has not rejoined yet: the round waits for it
  rs = s.join(3, 2, "n3", 1, t0 + 2s);
  CHECK(of_kind(rs, 1, Reply::assign)->assignment.group_rank == 0);
  CHECK(of_kind(rs, 4, Reply::assign)->assignment.group_rank == 1);  // the lowest spare, in n2's place
  CHECK(of_kind(rs, 3, Reply::assign)->assignment.group_rank == 2);  // n3 keeps its place
  CHECK(of_kind(rs, 3, Reply::assign)->assignment.rank_offset == 2);
  CHECK(of_kind(rs, 4, Reply::assign)->assignment.restart_count == 0);
  CHECK(of_kind(rs, 5, Reply::standby) != nullptr);  // the other spare waits on
  REQUIRE(s.replacements().size() == 1);
  const Replacement& r = s.replacements()[0];
  CHECK(r.round == 1);
  CHECK(r.group_rank == 1);
  CHECK(r.old_host == "n2");
  CHECK(r.new_host == "n4");
  CHECK(r.old_node_rank == 1);
  CHECK(r.new_node_rank == 3);
  CHECK(r.why == "its agent was lost");
  CHECK(describe(r) == "round 1: n4 (node 3) took the place of n2 (node 1) as group rank 1: its agent was lost");
  CHECK(s.standby() == std::vector<std::string>{"n5 (node 4)"});
}

TEST_CASE("spares: a worker's failure restarts the same nodes, a slow one is waited for and keeps its place") {
  auto t0 = Clock::now();
  RendezvousState s = formed(with_spares(2, 1, 1), 3, t0);
  Failure crash;
  crash.host = "n2";
  crash.node_rank = 1;
  crash.rank = 1;
  crash.exit_code = 1;
  auto rs = s.failed(2, 0, crash, t0 + 1s);
  CHECK(of_kind(rs, 1, Reply::restart) != nullptr);
  CHECK(s.join(1, 0, "n1", 1, t0 + 2s).empty());  // node 0 and the spare make MAX, but node 1 is still coming
  rs = s.join(2, 1, "n2", 1, t0 + 5s);
  CHECK(of_kind(rs, 2, Reply::assign)->assignment.group_rank == 1);
  CHECK(of_kind(rs, 3, Reply::standby) != nullptr);
  CHECK(s.replacements().empty());
}

TEST_CASE("spares: the node blamed for a hang is retired while a spare waits, and runs again only as a last resort") {
  auto t0 = Clock::now();
  RendezvousConfig c = with_spares(2, 1, 3);
  c.hang_window = 0s;
  RendezvousState s = formed(c, 3, t0);
  auto rs = s.failed(2, 0, hang_of(1, 1), t0 + 1s);  // rank 1 on node 1 (n2) held the job
  CHECK(of_kind(rs, 2, Reply::restart) != nullptr);
  s.join(1, 0, "n1", 1, t0 + 2s);  // the round closes without waiting for the retired node
  REQUIRE(s.phase() == RendezvousState::Phase::running);
  rs = s.join(2, 1, "n2", 1, t0 + 3s);
  REQUIRE(of_kind(rs, 2, Reply::standby) != nullptr);
  CHECK(of_kind(rs, 2, Reply::standby)->failure.reason == "retired");
  CHECK(s.standby() == std::vector<std::string>{"n2 (node 1), retired"});
  REQUIRE(s.replacements().size() == 1);
  CHECK(s.replacements()[0].new_host == "n3");
  CHECK(s.replacements()[0].why == "it was blamed for a hang (rank 1)");
  // The spare is lost: the retired node is all that is left, and takes the place again.
  rs = s.lost(3, t0 + 4s);
  CHECK(of_kind(rs, 1, Reply::restart) != nullptr);
  rs = s.join(1, 0, "n1", 1, t0 + 5s);
  REQUIRE(of_kind(rs, 2, Reply::assign) != nullptr);
  CHECK(of_kind(rs, 2, Reply::assign)->assignment.group_rank == 1);
  CHECK(s.replacements().size() == 2);
  CHECK(s.replacements()[1].why == "its agent was lost");
}

TEST_CASE("spares: a hang blamed on the store's node, or with no spare waiting, retires no one") {
  auto t0 = Clock::now();
  RendezvousConfig c = with_spares(2, 1, 3);
  c.hang_window = 0s;
  RendezvousState s = formed(c, 3, t0);
  s.failed(1, 0, hang_of(0, 0), t0 + 1s);
  s.join(1, 0, "n1", 1, t0 + 2s);
  auto rs = s.join(2, 1, "n2", 1, t0 + 2s);
  CHECK(of_kind(rs, 1, Reply::assign)->assignment.group_rank == 0);
  CHECK(of_kind(rs, 2, Reply::assign)->assignment.group_rank == 1);
  CHECK(s.replacements().empty());
  // No spares: the blamed node runs on, as before.
  RendezvousConfig none = config(2, 2, 3);
  none.hang_window = 0s;
  RendezvousState n = formed(none, 2, t0);
  n.failed(2, 0, hang_of(1, 1), t0 + 1s);
  n.join(1, 0, "n1", 1, t0 + 2s);
  rs = n.join(2, 1, "n2", 1, t0 + 2s);
  CHECK(of_kind(rs, 2, Reply::assign) != nullptr);
  CHECK(n.replacements().empty());
}

TEST_CASE("spares: with no spare left a lost node shrinks the group as far as MIN allows, then the job aborts") {
  auto t0 = Clock::now();
  RendezvousConfig c = config(1, 2);
  c.spares = 1;
  RendezvousState s = formed(c, 3, t0);
  s.lost(2, t0 + 1s);  // the spare takes node 1's place
  s.join(1, 0, "n1", 1, t0 + 2s);
  REQUIRE(s.phase() == RendezvousState::Phase::running);
  auto rs = s.lost(3, t0 + 3s);  // the spare, now running, is lost: one node is left, MIN is 1
  s.join(1, 0, "n1", 1, t0 + 4s);
  CHECK(s.phase() == RendezvousState::Phase::running);
  rs = s.lost(1, t0 + 5s);  // the store's node: the job ends
  CHECK(s.phase() == RendezvousState::Phase::aborted);
}

TEST_CASE("spares: a finished job tells the spares to finish too") {
  auto t0 = Clock::now();
  RendezvousState s = formed(with_spares(1, 1), 2, t0);
  auto rs = s.done(1, 0);
  CHECK(of_kind(rs, 2, Reply::finish) != nullptr);
}

}  // namespace agent_rendezvous_test

namespace agent_rendezvous_test {

TEST_CASE("torchrun's c10d line: agents without a node rank are numbered by the store, the anchor keeping 0") {
  auto t0 = Clock::now();
  RendezvousState s(config(3, 3), port_counter, t0);
  CHECK(s.join(7, -1, "b", 1, t0).empty());  // before the store's own agent: rank 1, 0 is the anchor's
  CHECK(s.join(8, -1, "c", 1, t0).empty());
  auto rs = s.join(1, 0, "a", 1, t0);
  REQUIRE(rs.size() == 3);
  CHECK(to(rs, 1)->assignment.node_rank == 0);
  CHECK(to(rs, 7)->assignment.node_rank == 1);
  CHECK(to(rs, 8)->assignment.node_rank == 2);
  CHECK(to(rs, 8)->assignment.group_rank == 2);
  // A restart: each rejoins as it joined (-1) and keeps its number.
  Failure crash;
  crash.rank = 1;
  crash.exit_code = 1;
  RendezvousState r(config(3, 3, 1), port_counter, t0);
  r.join(7, -1, "b", 1, t0);
  r.join(8, -1, "c", 1, t0);
  r.join(1, 0, "a", 1, t0);
  r.failed(7, 0, crash, t0);
  r.join(8, -1, "c", 1, t0);
  r.join(7, -1, "b", 1, t0);
  rs = r.join(1, 0, "a", 1, t0);
  REQUIRE(rs.size() == 3);
  CHECK(to(rs, 7)->assignment.node_rank == 1);
  CHECK(to(rs, 8)->assignment.node_rank == 2);
  // One too many is refused.
  auto refused = s.join(9, -1, "d", 1, t0);
  REQUIRE(refused.size() == 1);
  CHECK(refused[0].kind == Reply::refuse);
  CHECK(refused[0].failure.reason == "all 3 node ranks are taken");
}

}  // namespace agent_rendezvous_test
