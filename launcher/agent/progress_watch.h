// Whether this node's workers are still moving, for --hang-timeout: per local rank, when it last reported progress
// (its progress file: hpclaunch.progress(), the Lightning callback, hpclaunch-train's steps; a torchrun file timer
// request) and when it last printed a line. Pure: times are passed in; agent/elastic_agent.cc feeds it.
//
// The rules (docs/agent.md, "Hangs"):
// - A program that reports progress (any rank of this node, in this attempt or an earlier one) is held to the
//   timeout from each rank's last report, and to the startup timeout from the attempt's start before its first.
// - A program that reports nothing is held to its output only when asked (--hang-output): the node is idle when no
//   worker has printed a line for the timeout (ezpz's idle-output watchdog).
// - A worker that has exited is not watched. The rank blamed is the one whose progress is oldest.
#pragma once
#include <chrono>
#include <optional>
#include <string>
#include <vector>

namespace hpclaunch {

struct ProgressWatchConfig {
  double timeout_s = 0;  // 0: no hang watch
  bool output = false;   // a program that reports nothing is judged by its output lines
  // The time a rank may take, from the attempt's start, to its first report (imports, a checkpoint to load, the
  // process group to form); 0: timeout_s, at least 300 s (a resume took more than a step's 8 s on a loaded node).
  double startup_s = 0;
};

struct Hang {
  int local_rank = -1;
  double idle_s = 0;        // since its last progress (or line)
  std::string source;       // "progress" or "output": what it was judged by
  bool ever_reported = false;  // this rank reported progress in this attempt
};

// What a hung worker's stacks say of it (agent/stacks.h reads them).
struct RankSigns {
  bool stopped_or_blocked = false;  // stopped (SIGSTOP, a debugger) or in an uninterruptible wait (D)
  bool waits_for_peers = false;     // its main thread waits in a collective or in backward
};

class ProgressWatch {
 public:
  using Clock = std::chrono::steady_clock;
  explicit ProgressWatch(ProgressWatchConfig config);

  bool enabled() const { return m_config.timeout_s > 0; }
  const ProgressWatchConfig& config() const { return m_config; }
  // What a requeued job's earlier runs reported (JOBDIR/progress.json): the next attempt must pass `best`.
  void seed(bool reported, std::optional<long long> best);
  // A new attempt of `nproc` workers started at `now`; what earlier attempts reported is kept (reported_before).
  void start(int nproc, Clock::time_point now);
  // Progress from `local_rank` at `t`, with its step when the program gave one.
  void report(int local_rank, Clock::time_point t, std::optional<long long> step = std::nullopt);
  void output(int local_rank, Clock::time_point t);
  void exited(int local_rank);

  // The hang, if any rank (or the node's output) has been idle past the timeout at `now`.
  std::optional<Hang> check(Clock::time_point now) const;
  // What check would say of `local_rank` alone, hung or not.
  Hang rank_idle(int local_rank, Clock::time_point now) const;
  // The rank to blame for the hang check() found at `seen` (`oldest`), once the stacks are read (`signs`, by local
  // rank). In a collective every rank waits, and ranks that last reported within 1.5 s of the oldest (the
  // progress files' pace) are as old as it. Among those running: a stopped or blocked worker, else one whose main
  // thread does not wait for its peers, else the oldest.
  Hang blame(const Hang& oldest, Clock::time_point seen, const std::vector<RankSigns>& signs) const;
  // Whether the attempt made progress: a report whose step passes every earlier attempt's best, or, for a program
  // that gives no steps, any report at all.
  bool progressed() const;
  // Whether any attempt on this node has reported progress: the program is one that reports.
  bool reports() const { return m_reported_before || m_reported; }
  std::optional<long long> best_step() const;

 private:
  struct Rank {
    std::optional<Clock::time_point> report;
    std::optional<Clock::time_point> line;
    bool running = true;
  };

  ProgressWatchConfig m_config;
  Clock::time_point m_start{};
  std::vector<Rank> m_ranks;
  bool m_reported_before = false;              // an earlier attempt reported
  std::optional<long long> m_best_before;      // the best step of earlier attempts
  std::optional<long long> m_best;             // this attempt's
  bool m_reported = false;                     // this attempt reported (with or without a step)
};

}  // namespace hpclaunch
