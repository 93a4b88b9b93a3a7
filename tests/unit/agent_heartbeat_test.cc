#include <doctest/doctest.h>

#include "agent/heartbeat.h"

namespace agent_heartbeat_test {  // this file's names, apart from its unity batch's others (tests/CMakeLists.txt)

using namespace hpclaunch;
using namespace std::chrono_literals;

TEST_SUITE_BEGIN("agent heartbeat");

TEST_CASE("one heartbeat a second each way up to 2,000 agents, as before") {
  CHECK(heartbeat_interval(1, 5000ms) == 1000ms);
  CHECK(heartbeat_interval(16, 5000ms) == 1000ms);
  CHECK(heartbeat_interval(2000, 5000ms) == 1000ms);
  CHECK(heartbeat_interval(0, 5000ms) == 1000ms);
}

TEST_CASE("past 2,000 agents the interval grows so the store reads about 2,000 heartbeats a second") {
  CHECK(heartbeat_interval(2001, 60000ms) == 1100ms);  // rounded up to a tenth of a second
  CHECK(heartbeat_interval(5000, 60000ms) == 2500ms);
  CHECK(heartbeat_interval(10000, 60000ms) == 5000ms);
  CHECK(heartbeat_interval(20000, 60000ms) == 10000ms);
}

TEST_CASE("the interval stays within a third of the timeout, so a live agent is never taken for a lost one") {
  CHECK(heartbeat_interval(10000, 5000ms) == 1600ms);   // 5 s / 3, in whole tenths
  CHECK(heartbeat_interval(10000, 15000ms) == 5000ms);  // torchrun's 5 s x 3 keep-alive
  CHECK(heartbeat_interval(20000, 15000ms) == 5000ms);
  for (size_t n : {1000, 5000, 10000, 20000, 100000})
    for (auto t : {3000ms, 5000ms, 10000ms, 30000ms}) CHECK(heartbeat_interval(n, t) * 3 <= t);
}

TEST_CASE("a short timeout keeps the 1 s interval (what agents always did)") {
  CHECK(heartbeat_interval(10000, 2000ms) == 1000ms);
  CHECK(heartbeat_interval(10000, 1000ms) == 1000ms);
}

TEST_CASE("a client takes the store's interval only when the store could have sent it for this timeout") {
  CHECK(adopt_heartbeat_interval(1600, 5000ms, 1000ms) == 1600ms);
  CHECK(adopt_heartbeat_interval(1000, 5000ms, 1600ms) == 1000ms);
  CHECK(adopt_heartbeat_interval(5000, 5000ms, 1000ms) == 1000ms);  // no time left to notice a lost store
  CHECK(adopt_heartbeat_interval(0, 5000ms, 1000ms) == 1000ms);
  CHECK(adopt_heartbeat_interval(-1, 5000ms, 1000ms) == 1000ms);
  CHECK(adopt_heartbeat_interval(999, 5000ms, 1000ms) == 1000ms);
  CHECK(adopt_heartbeat_interval(1000, 2000ms, 1000ms) == 1000ms);  // a short timeout: 1 s is still allowed
  // Whatever the store announces for any N, its clients (same timeout) take it.
  for (size_t n : {1000, 3000, 10000, 50000})
    for (auto t : {2000ms, 5000ms, 15000ms})
      CHECK(adopt_heartbeat_interval(heartbeat_interval(n, t).count(), t, 1000ms) == heartbeat_interval(n, t));
}

TEST_SUITE_END();

}  // namespace agent_heartbeat_test
