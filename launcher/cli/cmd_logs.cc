// `hpclaunch logs JOB [--follow] [--rank R]`: the job's output file (slurm-ID.out, PBS's, output.log), optionally
// only one rank's lines, optionally followed until the job ends.
#include <fmt/core.h>

#include <chrono>
#include <filesystem>
#include <fstream>
#include <thread>

#include "cli/cli_util.h"
#include "record/job_record.h"
#include "scheduler/backend.h"
#include "jobs/log_filter.h"
#include "submit/job_index.h"
#include "util/error.h"
#include "util/process.h"

namespace hpclaunch {

namespace {

namespace fs = std::filesystem;
using Clock = std::chrono::steady_clock;

std::string existing_output(const JobRecord& job) {
  std::error_code ec;
  for (const auto& c : backend_for(job.scheduler).output_files(job))
    if (fs::exists(c, ec)) return c;
  return {};
}

// Reads what `path` has past `*offset` and prints the whole lines `rank` keeps. A file that shrank (a requeued
// job starting its output anew) is read from its start again.
void print_new(const std::string& path, std::uintmax_t* offset, LineBuffer& lines, std::optional<int> rank) {
  std::error_code ec;
  std::uintmax_t size = fs::file_size(path, ec);
  if (ec) return;
  if (size < *offset) *offset = 0;
  if (size == *offset) return;
  std::ifstream in(path, std::ios::binary);
  in.seekg(static_cast<std::streamoff>(*offset));
  std::string bytes(size - *offset, '\0');
  in.read(bytes.data(), static_cast<std::streamsize>(bytes.size()));
  bytes.resize(static_cast<size_t>(in.gcount()));
  *offset += bytes.size();
  for (const auto& line : lines.add(bytes))
    if (keep_line(line, rank)) fmt::print("{}\n", line);
  std::fflush(stdout);
}

void print_rest(LineBuffer& lines, std::optional<int> rank) {
  if (auto last = lines.flush(); last && keep_line(*last, rank)) fmt::print("{}\n", *last);
  std::fflush(stdout);
}

}  // namespace

int cmd_logs(const Args& args) {
  CLI::App app("Print a job's output; --follow keeps printing until the job ends.", "logs");
  std::string ref;
  bool follow = false;
  std::optional<int> rank;
  double interval = 0.5;
  app.add_option("JOB", ref, "job id from `hpclaunch jobs`, or a job directory")->required();
  app.add_flag("--follow,-f", follow, "keep printing new output until the job ends");
  app.add_option("--rank,-r", rank, "only this rank's lines (the agent's [host:RANK] or srun -l's RANK: prefix)")
      ->check(CLI::Range(0, 1000000));
  app.add_option("--interval", interval, "seconds between looks at the file when following")->capture_default_str()
      ->check(CLI::Range(0.01, 3600.0));
  if (!parse_or_throw(app, args)) return 0;
  JobRecord job = resolve_job(ref, read_job_index());
  if (!job.dir_exists)
    throw failure(job.dir, "the job directory no longer exists", "its output went with it; `hpclaunch jobs` lists the others");

  LineBuffer lines;
  std::uintmax_t offset = 0;
  if (!follow) {
    std::string path = existing_output(job);
    if (path.empty()) {
      std::string state = job.submitted ? describe(backend_for(job.scheduler).query(job, run_capture)) : "never submitted";
      throw failure(job.dir, "no output yet (job " + job.job_id + " is " + state + ")",
                    "try again once it runs, or use `hpclaunch logs --follow`");
    }
    print_new(path, &offset, lines, rank);
    print_rest(lines, rank);
    return 0;
  }

  const auto state_every = std::chrono::seconds(2);
  auto last_check = Clock::now() - state_every;
  std::string path;
  for (;;) {
    if (path.empty()) path = existing_output(job);
    if (!path.empty()) print_new(path, &offset, lines, rank);
    if (Clock::now() - last_check >= state_every) {
      last_check = Clock::now();
      JobState state = backend_for(job.scheduler).query(job, run_capture);
      if (state.finished()) {
        // The scheduler may report the end a moment before the last bytes are visible: one more look.
        std::this_thread::sleep_for(std::chrono::milliseconds(300));
        if (path.empty()) path = existing_output(job);
        if (!path.empty()) print_new(path, &offset, lines, rank);
        print_rest(lines, rank);
        fmt::print(stderr, "hpclaunch: job {} {}\n", job.job_id, describe(state));
        return 0;
      }
    }
    std::this_thread::sleep_for(std::chrono::duration<double>(interval));
  }
}

}  // namespace hpclaunch
