// `hpclaunch wait JOB`: waits for the job to end, showing its queue state and then the trainer's step and loss
// (from the metrics file) on one line redrawn in place on a terminal, or as a plain line per change otherwise.
// Exit: 0 completed, 1 failed/cancelled/timed out, 3 finished but the scheduler no longer knows how, 124 --timeout.
#include <fmt/core.h>
#include <sys/ioctl.h>
#include <unistd.h>

#include <chrono>
#include <filesystem>
#include <thread>

#include "cli/cli_util.h"
#include "cli/json_output.h"
#include "dialect/dialect.h"
#include "jobs/metrics_location.h"
#include "record/job_record.h"
#include "scheduler/backend.h"
#include "jobs/progress.h"
#include "jobs/watch.h"
#include "submit/job_index.h"
#include "util/error.h"
#include "util/command.h"
#include "util/strings.h"

namespace hpclaunch {

namespace {

using PollClock = std::chrono::steady_clock;
constexpr int k_exit_state_unknown = 3;
constexpr int k_exit_timeout = 124;

size_t terminal_width() {
  struct winsize ws {};
  if (::ioctl(STDOUT_FILENO, TIOCGWINSZ, &ws) == 0 && ws.ws_col > 0) return ws.ws_col;
  return 80;
}

}  // namespace

int cmd_wait(const Args& args) {
  CLI::App app("Wait for a job to end, showing its state and the trainer's progress.", "wait");
  std::string ref;
  double timeout = 0, interval = 0;
  app.add_option("JOB", ref, "job id from `hpclaunch jobs`, or a job directory; JOB_I: task I of an array (an array: "
                 "until every task has ended)")->required();
  app.add_option("--timeout", timeout, "give up after this many seconds (exit 124); 0: no limit")->capture_default_str()
      ->check(CLI::Range(0.0, 1e7));
  // 0: the pace of the job's scheduler (SchedulerBackend::poll_interval), named in the help from the backends.
  std::vector<std::string> paces;
  for (const SchedulerDialect* d : all_dialects())
    paces.push_back(fmt::format("{} {}", to_string(d->kind()), backend_for(d->kind()).poll_interval()));
  app.add_option("--interval", interval,
                 fmt::format("seconds between looks at the job [default: its scheduler's pace: {}]", join(paces, ", ")))
      ->check(CLI::Range(0.01, 3600.0));
  bool json_flag = false;
  app.add_flag("--json", json_flag, "print the final state and exit code as JSON; the progress goes to stderr (docs/json.md)");
  if (!parse_or_throw(app, args)) return 0;
  JsonStdout json(json_flag);
  JobRecord job = resolve_job(ref, read_job_index());
  if (interval == 0) interval = backend_for(job.scheduler).poll_interval();
  const std::string cwd = std::filesystem::current_path().string();

  const bool tty = ::isatty(STDOUT_FILENO) == 1;
  const auto start = PollClock::now();
  std::string previous;
  size_t previous_length = 0;
  StateWatch watch(job, run_capture);
  watch.on_note([&](const std::string& note) {
    if (tty && previous_length) fmt::print("\n");
    previous_length = 0;
    fmt::print(stderr, "hpclaunch: note: {}\n", note);
  });
  JobState state;
  // The scheduler is asked every --interval, less often while the state does not change (PollBackoff); the
  // progress line is redrawn every --interval from the metrics file.
  PollBackoff backoff(interval);
  auto next_look = PollClock::now();
  for (;;) {
    if (PollClock::now() >= next_look) {
      try {
        std::optional<JobState> now = watch.look();
        const bool changed = now && describe(*now) != describe(state);
        if (now) state = *now;
        next_look = PollClock::now() + std::chrono::duration_cast<PollClock::duration>(
                                           std::chrono::duration<double>(backoff.next(changed)));
      } catch (const Error&) {
        if (tty && previous_length) fmt::print("\n");
        throw;
      }
    }
    Progress p;
    p.job_id = job.job_id;
    p.state = state;
    if (state.phase != Phase::pending && !job.is_array())  // an array's line: its counts alone
      p.latest = latest_records(read_file_tail(metrics_path(job, cwd), 64 * 1024));
    const double elapsed = std::chrono::duration<double>(PollClock::now() - start).count();
    if (tty) {
      p.elapsed_s = elapsed;
      std::string line = progress_line(p);
      fmt::print("{}", terminal_line(line, terminal_width(), previous_length));
      previous_length = std::min(line.size(), terminal_width() - 1);
      std::fflush(stdout);
    } else if (std::string line = progress_line(p); line != previous) {
      fmt::print("{}\n", line);
      std::fflush(stdout);
      previous = line;
    }
    if (state.finished()) break;
    if (timeout > 0 && elapsed >= timeout) {
      if (tty) fmt::print("\n");
      throw Error(job.job_id, fmt::format("still {} after --timeout {} s", describe(state), timeout),
                  "wait longer, or look with `hpclaunch status` / `hpclaunch logs`", k_exit_timeout);
    }
    std::this_thread::sleep_for(std::chrono::duration<double>(interval));
  }
  if (tty) fmt::print("\n");
  const int rc = state.succeeded() ? 0 : state.phase == Phase::finished_unknown ? k_exit_state_unknown : k_exit_failure;
  if (json.on()) json.print(wait_json(job, state, rc));
  if (state.succeeded()) return 0;
  fmt::print(stderr, "hpclaunch: job {} {}\n", job.job_id, describe(state));
  return state.phase == Phase::finished_unknown ? k_exit_state_unknown : k_exit_failure;
}

}  // namespace hpclaunch
