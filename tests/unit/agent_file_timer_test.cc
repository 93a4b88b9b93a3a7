#include <doctest/doctest.h>

#include <csignal>

#include "agent/file_timer.h"

namespace agent_file_timer_test {  // this file's names, apart from its unity batch's others

using namespace hpclaunch;

TEST_CASE("file timer: torch 2.15's FileTimerRequest lines") {
  std::string err;
  // As FileTimerRequest.to_json writes it.
  auto r = parse_timer_request(
      R"({"version": 1, "pid": 4242, "scope_id": "step", "expiration_time": 1795940000.5, "signal": 9})", &err);
  REQUIRE(r);
  CHECK(r->pid == 4242);
  CHECK(r->scope == "step");
  CHECK(r->expiration == doctest::Approx(1795940000.5));
  CHECK(r->signal == 9);
  auto release = parse_timer_request(R"({"version": 1, "pid": 4242, "scope_id": "step", "expiration_time": -1, "signal": 0})", &err);
  REQUIRE(release);
  CHECK(release->expiration < 0);
  CHECK_FALSE(parse_timer_request("not json", &err));
  CHECK(err == "not JSON");
  CHECK_FALSE(parse_timer_request(R"({"pid": "x", "scope_id": "s", "expiration_time": 1})", &err));
  CHECK(err == "not a FileTimerRequest (pid, scope_id, expiration_time, signal)");
  CHECK_FALSE(parse_timer_request(R"([1, 2])", &err));
}

TEST_CASE("file timer: a scope past its time reaps its process with the earliest expired signal; release clears") {
  FileTimers t;
  t.add({10, "a", 100, SIGKILL});
  t.add({10, "b", 90, SIGTERM});
  t.add({11, "a", 200, SIGKILL});
  t.add({12, "quiet", 50, 0});  // signal 0: never reaped
  CHECK(t.expired(80).empty());
  auto r = t.expired(150);
  REQUIRE(r.size() == 1);
  CHECK(r[0].pid == 10);
  CHECK(r[0].signal == SIGTERM);  // b expired first
  CHECK(r[0].scope == "b");
  CHECK(r[0].late_s == doctest::Approx(60));
  CHECK(t.size() == 2);  // every timer of pid 10 went; 11 and 12 stay
  t.add({11, "a", -1, 0});  // released
  CHECK(t.expired(1000).empty());
  CHECK(t.size() == 1);
  t.add({11, "a", 300, SIGKILL});  // a scope re-armed replaces the old one
  t.add({11, "a", 400, SIGKILL});
  CHECK(t.expired(350).empty());
  t.clear(11);
  CHECK(t.expired(1000).empty());
  t.clear(12);
  CHECK(t.size() == 0);
}

}  // namespace agent_file_timer_test
