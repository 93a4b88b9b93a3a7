#include <doctest/doctest.h>

#include <csignal>

#include "agent/agent_state.h"

namespace agent_state_test {  // this file's names, apart from its unity batch's others (tests/CMakeLists.txt)

using namespace hpclaunch;

namespace {

AgentStateConfig config(int node_rank, int max_restarts = 1) {
  AgentStateConfig c;
  c.host = "n" + std::to_string(node_rank + 1);
  c.node_rank = node_rank;
  c.nproc = 2;
  c.max_restarts = max_restarts;
  c.grace_s = 5;
  c.rdzv_host = "n1";
  c.rdzv_port = 29400;
  c.serves_store = node_rank == 0;
  return c;
}

nlohmann::json assign(int round, int rank_offset, int restart_count = 0) {
  return {{"type", "assign"}, {"round", round}, {"group_rank", 1}, {"group_world_size", 2},
          {"rank_offset", rank_offset}, {"world_size", 4}, {"restart_count", restart_count},
          {"master_addr", "n1"}, {"master_port", 30001}};
}

std::vector<AgentAction::Kind> kinds(const AgentActions& acts) {
  std::vector<AgentAction::Kind> k;
  for (const auto& a : acts) k.push_back(a.kind);
  return k;
}

// The only action of `kind` in `acts`.
const AgentAction& only(const AgentActions& acts, AgentAction::Kind kind) {
  const AgentAction* found = nullptr;
  for (const auto& a : acts)
    if (a.kind == kind) {
      REQUIRE(found == nullptr);
      found = &a;
    }
  REQUIRE(found != nullptr);
  return *found;
}

bool has(const AgentActions& acts, AgentAction::Kind kind) {
  for (const auto& a : acts)
    if (a.kind == kind) return true;
  return false;
}

using K = AgentAction;

// An agent of node 1 whose workers (ranks 2 and 3) run round 0.
AgentState running_agent(int max_restarts = 1) {
  AgentState s(config(1, max_restarts));
  s.connected();
  s.message(assign(0, 2));
  return s;
}

}  // namespace

TEST_SUITE_BEGIN("agent state");

TEST_CASE("the agent joins on connecting, runs its assignment and reports success; finish ends it with 0") {
  AgentState s(config(1));
  auto acts = s.connected();
  REQUIRE(kinds(acts) == std::vector{K::send});
  CHECK(acts[0].message == nlohmann::json{{"type", "join"}, {"node_rank", 1}, {"host", "n2"}, {"nproc", 2}, {"round", 0}});
  acts = s.message(assign(0, 2));
  REQUIRE(kinds(acts) == std::vector{K::start_workers});
  CHECK(acts[0].assignment.rank_offset == 2);
  CHECK(acts[0].assignment.master_port == 30001);
  CHECK(s.worker_exited({0, 0, 0}).empty());
  CHECK(s.worker_exited({1, 0, 0}).empty());
  acts = s.workers_idle();
  REQUIRE(kinds(acts) == std::vector{K::send});
  CHECK(acts[0].message == nlohmann::json{{"type", "done"}, {"round", 0}});
  CHECK_FALSE(s.finished());
  acts = s.message({{"type", "finish"}});
  CHECK(kinds(acts) == std::vector{K::finish});
  CHECK(s.finished());
  CHECK(s.exit_code() == 0);
}

TEST_CASE("a failed worker is reported once with its error file; the store's restart re-joins the next round") {
  AgentState s = running_agent();
  auto acts = s.worker_exited({1, 7, 0, "ValueError: rank broke"});
  REQUIRE(kinds(acts) == std::vector{K::log, K::send});
  CHECK(acts[0].text == "worker failed: rank 3 (local rank 1) on n2 exited with code 7; stopping this node's workers");
  const auto& msg = acts[1].message;
  CHECK(msg["type"] == "failed");
  CHECK(msg["round"] == 0);
  Failure f = msg["failure"].get<Failure>();
  CHECK(f.rank == 3);
  CHECK(f.local_rank == 1);
  CHECK(f.exit_code == 7);
  CHECK(f.error == "ValueError: rank broke");
  // The others, ended by the group for this failure, are consequences.
  CHECK(s.worker_exited({0, 0, SIGTERM}).empty());
  acts = s.message({{"type", "restart"}, {"round", 1}});
  CHECK(kinds(acts) == std::vector{K::stop_workers});
  CHECK(acts[0].signal == SIGTERM);
  acts = s.workers_idle();
  REQUIRE(kinds(acts) == std::vector{K::send});
  CHECK(acts[0].message["type"] == "join");
  CHECK(acts[0].message["round"] == 1);
  CHECK(s.round() == 1);
  CHECK(kinds(s.message(assign(1, 2, 1))) == std::vector{K::start_workers});
  CHECK_FALSE(s.finished());
}

TEST_CASE("a lost peer: the store's restart makes healthy workers stop and the agent re-join") {
  AgentState s = running_agent();
  auto acts = s.message({{"type", "restart"}, {"round", 1}});
  CHECK(kinds(acts) == std::vector{K::stop_workers});
  // Stopped for the re-rendezvous, not failed: nothing is reported.
  CHECK(s.worker_exited({0, 0, SIGTERM}).empty());
  acts = s.workers_idle();
  REQUIRE(kinds(acts) == std::vector{K::send});
  CHECK(acts[0].message["type"] == "join");
  CHECK(acts[0].message["round"] == 1);
}

TEST_CASE("with no restarts left the store's abort stops the agent with exit code 1 and the root cause") {
  AgentState s = running_agent(0);
  s.worker_exited({1, 7, 0, "ValueError: rank broke"});
  Failure f;
  f.host = "n2";
  f.node_rank = 1;
  f.rank = 3;
  f.local_rank = 1;
  f.exit_code = 7;
  auto acts = s.message({{"type", "abort"}, {"failure", f}, {"restart_count", 0}});
  CHECK(kinds(acts) == std::vector{K::stop_workers});  // only node 0 records the failure
  CHECK_FALSE(s.finished());
  CHECK(kinds(s.workers_idle()) == std::vector{K::finish});
  CHECK(s.finished());
  CHECK(s.exit_code() == 1);
  CHECK(s.exit_message() == format_summary(f, 0, 0));
}

TEST_CASE("node 0 records the abort's failure as the job's") {
  AgentState s(config(0, 0));
  s.message(assign(0, 0));
  Failure f;
  f.reason = "the agent on n2 (node 1) was lost";
  auto acts = s.message({{"type", "abort"}, {"failure", f}});
  CHECK(only(acts, K::record_failure).failure.reason == f.reason);
  CHECK(has(acts, K::stop_workers));
}

TEST_CASE("a stop signal is forwarded with a stop, told to the store, and a second one is forwarded again") {
  AgentState s = running_agent();
  auto acts = s.signal(SIGTERM);
  REQUIRE(kinds(acts) == std::vector{K::log, K::send, K::stop_workers});
  CHECK(acts[0].text == "got SIGTERM: forwarded to the workers, stopping (SIGKILL after 5 s)");
  CHECK(acts[1].message["type"] == "shutdown");
  CHECK(acts[1].message["failure"]["reason"] == "the agent on n2 (node 1) got SIGTERM");
  CHECK(acts[2].signal == SIGTERM);
  // The workers it ends are not failures to report, and the store's abort that follows changes nothing.
  CHECK(s.worker_exited({0, 0, SIGTERM}).empty());
  CHECK(s.message({{"type", "abort"}, {"failure", Failure{}}}).empty());
  acts = s.signal(SIGTERM);
  REQUIRE(kinds(acts) == std::vector{K::signal_workers});
  CHECK(acts[0].signal == SIGTERM);
  CHECK(kinds(s.workers_idle()) == std::vector{K::finish});
  CHECK(s.exit_code() == 128 + SIGTERM);
  CHECK(s.exit_message() == "stopped: the agent on n2 (node 1) got SIGTERM");
}

TEST_CASE("node 0 stops its own store directly on a signal") {
  AgentState s(config(0));
  s.message(assign(0, 0));
  auto acts = s.signal(SIGINT);
  CHECK(only(acts, K::shutdown_store).failure.reason == "the agent on n1 (node 0) got SIGINT");
  CHECK_FALSE(has(acts, K::send));
}

TEST_CASE("a signal with no workers running ends the agent at once") {
  AgentState s(config(1));
  s.connected();
  auto acts = s.signal(SIGTERM);
  CHECK(kinds(acts) == std::vector{K::log, K::send, K::finish});
  CHECK(s.finished());
  CHECK(s.exit_code() == 128 + SIGTERM);
  CHECK(s.signal(SIGTERM).empty());  // finished: nothing more
}

TEST_CASE("USR1 and USR2 are only forwarded: a notice, not a stop") {
  AgentState s = running_agent();
  for (int sig : {SIGUSR1, SIGUSR2}) {
    auto acts = s.signal(sig);
    REQUIRE(kinds(acts) == std::vector{K::signal_workers});
    CHECK(acts[0].signal == sig);
  }
  // The workers decide; their exits are handled as any other.
  CHECK(kinds(s.worker_exited({0, 0, 0})).empty());
  CHECK(kinds(s.worker_exited({1, 0, 0})).empty());
  CHECK(kinds(s.workers_idle()) == std::vector{K::send});
  CHECK_FALSE(s.finished());
}

TEST_CASE("in a Slurm step a notice is not passed on: slurmstepd gave it to every process of the step") {
  // srun forwards the script's SIGUSR1 to the step, and slurmstepd signals all of its processes: passed on again,
  // every worker got it twice, and hpclaunch-train dies at a second warning (the Slurm soak found it).
  AgentStateConfig c = config(1);
  c.step_signals_workers = true;
  AgentState s(c);
  s.message(assign(0, 2));
  for (int sig : {SIGUSR1, SIGUSR2}) {
    auto acts = s.signal(sig);
    REQUIRE(kinds(acts) == std::vector{K::log});
    CHECK(acts[0].text.find("not passed on again") != std::string::npos);
  }
  // Stop signals still are (with the stop that kills what is left after the grace period).
  CHECK(has(s.signal(SIGTERM), K::stop_workers));
}

TEST_CASE("a worker's exit 99 (saved, requeue me) stops the job without a restart, restarts left or not") {
  for (int max_restarts : {0, 1000}) {
    CAPTURE(max_restarts);
    AgentState s = running_agent(max_restarts);
    CHECK(kinds(s.signal(SIGUSR1)) == std::vector{K::signal_workers});
    auto acts = s.worker_exited({0, k_exit_requeue, 0});
    REQUIRE(kinds(acts) == std::vector{K::log, K::send, K::stop_workers});
    CHECK(acts[0].text ==
          "worker rank 2 (local rank 0) on n2 exited with code 99 (saved, requeue me); stopping the job without a "
          "restart");
    CHECK(acts[1].message["type"] == "shutdown");  // not "failed": the store would restart it in place
    CHECK(acts[1].message["failure"]["exit_code"] == 99);
    CHECK(acts[2].signal == SIGTERM);
    CHECK(s.worker_exited({1, k_exit_requeue, 0}).empty());
    CHECK(s.message({{"type", "restart"}, {"round", 1}}).empty());  // too late: it is ending
    // It ends once the store's abort has come (which might have said "no progress": 93), not before.
    CHECK(s.workers_idle().empty());
    CHECK_FALSE(s.finished());
    Failure f = acts[1].message["failure"].get<Failure>();
    CHECK(kinds(s.message({{"type", "abort"}, {"failure", f}, {"restart_count", 0}})) == std::vector{K::finish});
    CHECK(s.exit_code() == k_exit_requeue);
    CHECK(s.exit_message() == "requeue: rank 2 (local rank 0) on n2 exited with code 99 (saved, requeue me)");
  }
}

TEST_CASE("node 0's worker asking for a requeue stops its own store directly") {
  AgentState s(config(0, 1000));
  s.message(assign(0, 0));
  auto acts = s.worker_exited({1, k_exit_requeue, 0});
  CHECK(only(acts, K::shutdown_store).failure.rank == 1);
  CHECK_FALSE(has(acts, K::send));
}

TEST_CASE("a peer's worker asked for a requeue: the store's abort ends this agent with 99 too") {
  AgentState s = running_agent(1000);
  Failure f;
  f.host = "n1";
  f.node_rank = 0;
  f.rank = 0;
  f.local_rank = 0;
  f.exit_code = k_exit_requeue;
  CHECK(kinds(s.message({{"type", "abort"}, {"failure", f}})) == std::vector{K::stop_workers});
  s.workers_idle();
  CHECK(s.exit_code() == k_exit_requeue);
  // 99 as a signal's number or from a lost node is no request: exit 1.
  for (bool lost : {false, true}) {
    AgentState t = running_agent(1000);
    Failure g = f;
    g.signal = lost ? 0 : 9;
    g.node_lost = lost;
    t.message({{"type", "abort"}, {"failure", g}});
    t.workers_idle();
    CHECK(t.exit_code() == 1);
  }
}

TEST_CASE("stopping for a peer's reason, a signal of its own gives the agent 128 + signal") {
  AgentState s = running_agent(0);
  Failure f;
  f.reason = "the agent on n1 (node 0) got SIGTERM";
  CHECK(kinds(s.message({{"type", "abort"}, {"failure", f}})) == std::vector{K::stop_workers});
  CHECK(s.exit_code() == 1);
  auto acts = s.signal(SIGTERM);
  CHECK(kinds(acts) == std::vector{K::log, K::send, K::signal_workers});
  s.workers_idle();
  CHECK(s.finished());
  CHECK(s.exit_code() == 128 + SIGTERM);
}

TEST_CASE("a lost store stops the workers and ends the agent with 1, naming the store") {
  AgentState s = running_agent();
  auto acts = s.store_lost("connection closed");
  CHECK(kinds(acts) == std::vector{K::stop_workers});
  CHECK(s.store_lost("again").empty());
  CHECK(kinds(s.workers_idle()) == std::vector{K::finish});
  CHECK(s.exit_code() == 1);
  CHECK(s.exit_message() == "lost the rendezvous store at n1:29400 (the node-0 agent): connection closed");
}

TEST_CASE("workers that cannot be started end the agent with the error's code") {
  AgentState s = running_agent();
  CHECK(kinds(s.start_failed(2, "cannot start 'x'")) == std::vector{K::finish});
  CHECK(s.exit_code() == 2);
  CHECK(s.exit_message() == "cannot start 'x'");
}

TEST_CASE("refused by the store, the agent ends with 1 and the store's reason") {
  AgentState s(config(1));
  s.connected();
  CHECK(kinds(s.message({{"type", "refuse"}, {"reason", "node rank 1 is taken"}})) == std::vector{K::finish});
  CHECK(s.exit_code() == 1);
  CHECK(s.exit_message() == "the rendezvous store refused this agent: node rank 1 is taken");
}

TEST_CASE("a message missing a field throws and changes nothing") {
  AgentState s(config(1));
  nlohmann::json bad = assign(0, 2);
  bad.erase("master_port");
  CHECK_THROWS_AS(s.message(bad), nlohmann::json::exception);
  CHECK(s.worker_exited({0, 1, 0}).empty());  // no workers were started
  CHECK(kinds(s.message(assign(0, 2))) == std::vector{K::start_workers});
}

}  // namespace agent_state_test

namespace agent_state_test {

TEST_CASE("a hang kills this node's workers at once and is reported as the round's failure, with where it was") {
  AgentState s = running_agent();
  Failure hang;
  hang.local_rank = 1;
  hang.hang_s = 120.4;
  hang.hang_source = "progress";
  hang.frame = "train.py:57 `next(loader)`";
  hang.stacks = "/jobs/1/stacks/attempt_0";
  auto acts = s.hung(hang);
  REQUIRE(kinds(acts) == std::vector{K::log, K::stop_workers, K::send});
  CHECK(acts[0].text == "hang: rank 3 (local rank 1) on n2 made no progress for 120 s, in train.py:57 `next(loader)`;"
                        " killing this node's workers");
  CHECK(acts[1].signal == SIGKILL);
  Failure f = acts[2].message["failure"].get<Failure>();
  CHECK(f.rank == 3);
  CHECK(f.host == "n2");
  CHECK(f.node_rank == 1);
  CHECK(f.hang_s == doctest::Approx(120.4));
  CHECK(f.stacks == "/jobs/1/stacks/attempt_0");
  CHECK(f.frame == "train.py:57 `next(loader)`");
  // The killed workers' ends are its consequences, and a second hang of the round is not reported again.
  CHECK(s.worker_exited({1, 0, SIGKILL}).empty());
  CHECK(s.hung(hang).empty());
  // Out of restarts: the store aborts with the hang, and the summary names the stacks.
  acts = s.message({{"type", "abort"}, {"failure", f}, {"restart_count", 1}});
  CHECK_FALSE(s.finished());  // not until the workers are gone
  s.workers_idle();
  CHECK(s.finished());
  CHECK(s.exit_code() == 1);
  CHECK(s.exit_message() ==
        "root cause: rank 3 (local rank 1) on n2 made no progress for 120 s, in train.py:57 `next(loader)` (after 1 "
        "of 1 restarts)\nstacks of every rank: /jobs/1/stacks/attempt_0");
}

TEST_CASE("progress is told to the store once a round; a no-progress abort ends the agent with 93") {
  AgentState s = running_agent();
  auto acts = s.progressed();
  REQUIRE(kinds(acts) == std::vector{K::send});
  CHECK(acts[0].message == nlohmann::json{{"type", "progress"}, {"round", 0}});
  CHECK(s.progressed().empty());
  Failure f;
  f.host = "n1";
  f.rank = 0;
  f.exit_code = 1;
  f.no_progress = 3;
  s.message({{"type", "abort"}, {"failure", f}, {"restart_count", 1}});
  s.workers_idle();
  CHECK(s.finished());
  CHECK(s.exit_code() == 93);
  CHECK(s.exit_message().find("no progress in 3 attempts in a row: stopped, not requeued") != std::string::npos);
  CHECK(s.progressed().empty());  // nothing runs
}

}  // namespace agent_state_test

namespace agent_state_test {

TEST_CASE("a worker's requeue (99) becomes 93 when the store says the job made no progress; node 0 records it") {
  AgentStateConfig c = config(0);
  AgentState s(c);
  s.connected();
  s.message(assign(0, 0));
  auto acts = s.worker_exited({0, 99, 0});
  CHECK(s.exit_code() == 99);
  Failure f;
  f.host = "n1";
  f.rank = 0;
  f.exit_code = 99;
  f.no_progress = 3;
  acts = s.message({{"type", "abort"}, {"failure", f}, {"restart_count", 0}});
  REQUIRE(kinds(acts) == std::vector{K::record_failure});
  CHECK(acts[0].failure.no_progress == 3);
  s.workers_idle();
  CHECK(s.finished());
  CHECK(s.exit_code() == 93);
  CHECK(s.exit_message().find("no progress in 3 attempts in a row: stopped, not requeued") != std::string::npos);
  // Without the verdict it stays 99.
  AgentState t = running_agent();
  t.worker_exited({0, 99, 0});
  f.no_progress = 0;
  CHECK(t.message({{"type", "abort"}, {"failure", f}, {"restart_count", 0}}).empty());
  t.workers_idle();
  CHECK(t.exit_code() == 99);
}

}  // namespace agent_state_test

namespace agent_state_test {

TEST_CASE("a spare says so once, holds no workers, and starts them when the store gives it a place") {
  AgentState s(config(2));
  s.connected();
  auto acts = s.message({{"type", "standby"}, {"as", "spare"}});
  REQUIRE(kinds(acts) == std::vector{K::log});
  CHECK(acts[0].text.find("a spare: this node waits in the rendezvous") == 0);
  CHECK(s.message({{"type", "standby"}, {"as", "spare"}}).empty());  // said once
  CHECK_FALSE(s.running());
  acts = s.message(assign(1, 2));
  REQUIRE(kinds(acts) == std::vector({K::log, K::start_workers}));
  CHECK(acts[0].text == "taking a place in round 1 as group rank 1");
  CHECK(s.running());
  // Retired after a hang: said again, since it is news.
  s.workers_idle();
  acts = s.message({{"type", "standby"}, {"as", "retired"}});
  REQUIRE(kinds(acts) == std::vector{K::log});
  CHECK(acts[0].text.find("retired after the hang") == 0);
  // The job ends: a spare finishes with 0 as every agent does.
  CHECK(kinds(s.message({{"type", "finish"}})) == std::vector{K::finish});
  CHECK(s.exit_code() == 0);
}

}  // namespace agent_state_test

namespace agent_state_test {

TEST_CASE("an agent numbered by the store (torchrun's c10d line) takes its node rank from its first assignment") {
  AgentState s(config(-1));
  auto acts = s.connected();
  CHECK(acts[0].message["node_rank"] == -1);
  nlohmann::json a = assign(0, 2);
  a["node_rank"] = 1;
  s.message(a);
  acts = s.worker_exited({0, 1, 0});
  CHECK(only(acts, K::send).message["failure"]["node_rank"] == 1);
}

}  // namespace agent_state_test
