#include <doctest/doctest.h>

#include "agent/progress_watch.h"

namespace agent_progress_watch_test {  // this file's names, apart from its unity batch's others

using namespace hpclaunch;
using Clock = ProgressWatch::Clock;
using std::chrono::seconds;
using std::chrono::milliseconds;

const Clock::time_point t0 = Clock::time_point{} + std::chrono::hours(1);

TEST_CASE("progress watch: off without a timeout, whatever happens") {
  ProgressWatch w({0, true});
  w.start(2, t0);
  CHECK_FALSE(w.enabled());
  CHECK_FALSE(w.check(t0 + std::chrono::hours(10)));
}

TEST_CASE("progress watch: a silent program is not judged unless its output is asked for") {
  ProgressWatch quiet({10, false});
  quiet.start(2, t0);
  CHECK_FALSE(quiet.check(t0 + seconds(1000)));

  ProgressWatch by_output({10, true});
  by_output.start(2, t0);
  by_output.output(0, t0 + seconds(5));
  by_output.output(1, t0 + seconds(8));
  CHECK_FALSE(by_output.check(t0 + seconds(18)));  // rank 1 printed 10 s ago: not past the timeout
  auto h = by_output.check(t0 + milliseconds(18001));
  REQUIRE(h);
  CHECK(h->source == "output");
  CHECK(h->local_rank == 0);  // its last line is the oldest
  CHECK(h->idle_s == doctest::Approx(13.001));
}

TEST_CASE("progress watch: output from any worker keeps a silent node alive") {
  ProgressWatch w({10, true});
  w.start(3, t0);
  for (int s = 1; s <= 100; ++s) w.output(2, t0 + seconds(s));  // only rank 2 talks
  CHECK_FALSE(w.check(t0 + seconds(105)));
  auto h = w.check(t0 + seconds(111));
  REQUIRE(h);
  CHECK(h->local_rank == 0);
}

TEST_CASE("progress watch: a program that reports is held to each rank's own progress") {
  ProgressWatch w({30, false, 30});
  w.start(2, t0);
  CHECK_FALSE(w.check(t0 + seconds(29)));
  w.report(0, t0 + seconds(20), 1);
  // rank 1 never reported: measured from the attempt's start
  auto h = w.check(t0 + seconds(31));
  REQUIRE(h);
  CHECK(h->local_rank == 1);
  CHECK(h->source == "progress");
  CHECK_FALSE(h->ever_reported);
  w.report(1, t0 + seconds(31), 1);
  CHECK_FALSE(w.check(t0 + seconds(45)));
  // output is not progress once the program reports
  for (int s = 32; s < 100; ++s) w.output(0, t0 + seconds(s));
  h = w.check(t0 + seconds(51));
  REQUIRE(h);
  CHECK(h->local_rank == 0);  // reported at 20, rank 1 at 31
  CHECK(h->ever_reported);
  CHECK(h->idle_s == doctest::Approx(31));
}

TEST_CASE("progress watch: an exited worker is not watched") {
  ProgressWatch w({10, true});
  w.start(2, t0);
  w.report(0, t0 + seconds(1));
  w.exited(1);
  CHECK_FALSE(w.check(t0 + seconds(11)));
  auto h = w.check(t0 + seconds(12));
  REQUIRE(h);
  CHECK(h->local_rank == 0);
  w.exited(0);
  CHECK_FALSE(w.check(t0 + seconds(1000)));
}

TEST_CASE("progress watch: a reporter from an earlier attempt is held from the next attempt's start") {
  ProgressWatch d({10, false});  // by default the startup timeout is 300 s at least
  d.start(1, t0);
  d.report(0, t0);
  d.start(1, t0 + seconds(100));
  CHECK_FALSE(d.check(t0 + seconds(399)));
  CHECK(d.check(t0 + seconds(401)));
  ProgressWatch w({10, false, 10});
  w.start(1, t0);
  w.report(0, t0 + seconds(1));
  w.start(1, t0 + seconds(100));
  CHECK(w.reports());
  CHECK_FALSE(w.check(t0 + seconds(110)));
  CHECK(w.check(t0 + seconds(111)));
}

TEST_CASE("progress watch: the startup timeout holds a rank only until its first report") {
  ProgressWatch w({10, false, 60});
  w.start(2, t0);
  w.report(0, t0 + seconds(1));  // the program reports
  w.start(2, t0 + seconds(100));  // a restart: imports and the process group again
  CHECK_FALSE(w.check(t0 + seconds(150)));
  w.report(1, t0 + seconds(155));
  CHECK_FALSE(w.check(t0 + seconds(160)));  // rank 0 still starting, rank 1 reported 5 s ago
  auto h = w.check(t0 + seconds(166));      // rank 1 past 10 s since its report; rank 0 (66 s) past its 60
  REQUIRE(h);
  CHECK(h->local_rank == 0);  // the oldest
  CHECK_FALSE(h->ever_reported);
  w.report(0, t0 + seconds(166));
  h = w.check(t0 + seconds(166));
  REQUIRE(h);
  CHECK(h->local_rank == 1);
  CHECK(h->idle_s == doctest::Approx(11));
}

TEST_CASE("progress watch: an attempt progressed when it passes the best step before it") {
  ProgressWatch w({0, false});  // progress is read without a hang timeout too (no progress, no requeue)
  w.start(2, t0);
  CHECK_FALSE(w.progressed());
  CHECK_FALSE(w.reports());
  w.report(0, t0, 5);
  w.report(1, t0, 7);
  CHECK(w.progressed());
  CHECK(w.best_step() == 7);
  w.start(2, t0 + seconds(1));  // restarted from a checkpoint at step 4
  w.report(0, t0 + seconds(2), 5);
  w.report(0, t0 + seconds(3), 7);
  CHECK_FALSE(w.progressed());  // not past 7
  w.report(1, t0 + seconds(4), 8);
  CHECK(w.progressed());
  CHECK(w.best_step() == 8);
  w.start(2, t0 + seconds(5));
  CHECK_FALSE(w.progressed());
  CHECK(w.best_step() == 8);  // kept across attempts
}

TEST_CASE("progress watch: without steps any report is progress") {
  ProgressWatch w({0, false});
  w.start(1, t0);
  w.report(0, t0);
  CHECK(w.progressed());
  w.start(1, t0 + seconds(1));
  CHECK_FALSE(w.progressed());
  w.report(0, t0 + seconds(2));
  CHECK(w.progressed());
  w.report(7, t0 + seconds(2));  // out of range: ignored
  w.output(-1, t0);
}

}  // namespace agent_progress_watch_test

namespace agent_progress_watch_test {

TEST_CASE("progress watch: the blame goes to a stopped worker, else one not waiting for its peers, among the oldest") {
  ProgressWatch w({10, false, 10});
  w.start(4, t0);
  w.report(0, t0 + milliseconds(1000));
  w.report(1, t0 + milliseconds(1500));
  w.report(2, t0 + milliseconds(2000));
  w.report(3, t0 + milliseconds(5000));  // 4 s after the oldest: not as old
  const auto seen = t0 + seconds(12);
  auto oldest = w.check(seen);
  REQUIRE(oldest);
  CHECK(oldest->local_rank == 0);
  // All wait in their collective: the oldest.
  std::vector<RankSigns> all_waiting(4, RankSigns{false, true});
  CHECK(w.blame(*oldest, seen, all_waiting).local_rank == 0);
  // Rank 2 is elsewhere (a loader, a sleep): it holds the others.
  auto signs = all_waiting;
  signs[2].waits_for_peers = false;
  Hang b = w.blame(*oldest, seen, signs);
  CHECK(b.local_rank == 2);
  CHECK(b.idle_s == doctest::Approx(10));
  // Rank 1 is stopped: before anything else.
  signs[1].stopped_or_blocked = true;
  CHECK(w.blame(*oldest, seen, signs).local_rank == 1);
  // Rank 3 is not among the oldest, stopped or not; an exited rank is not blamed.
  auto late = all_waiting;
  late[3] = {true, false};
  CHECK(w.blame(*oldest, seen, late).local_rank == 0);
  w.exited(1);
  CHECK(w.blame(*oldest, seen, signs).local_rank == 2);
  CHECK(w.blame(*oldest, seen, {}).local_rank == 0);  // no stacks read
}

}  // namespace agent_progress_watch_test

namespace agent_progress_watch_test {

TEST_CASE("progress watch: a requeued run is seeded with the best step of the runs before") {
  ProgressWatch w({0, false});
  w.seed(true, 40);
  w.start(1, t0);
  CHECK(w.reports());
  w.report(0, t0, 40);
  CHECK_FALSE(w.progressed());
  w.report(0, t0, 41);
  CHECK(w.progressed());
  CHECK(w.best_step() == 41);
}

}  // namespace agent_progress_watch_test
