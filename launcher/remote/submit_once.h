// The far side of `submit --remote`: a submit token makes a submission happen once, however often the laptop
// retries after a lost connection (docs/remote.md, "Never twice").
//
// The laptop makes a token per submit and sends it again on every retry. The far submit takes an exclusive lock on
// TOKENS/TOKEN.lock (a retry waits here while the first attempt still runs), then reads TOKENS/TOKEN.json:
//   - absent: it writes {"state": "started"} (atomically) BEFORE any job directory or scheduler command, then
//     submits with SIGHUP and SIGPIPE ignored and its output kept in files, not on the connection's pipes, so a
//     dropped connection cannot stop it half-way; at the end it writes {"state": "done"} with its exit status and
//     output, and only then prints that output;
//   - done: it prints the recorded output and exits with the recorded status: the same job, not a second one;
//   - started (the attempt that wrote it was killed, as by SIGKILL or a reboot, before it recorded an end): it
//     refuses to submit, naming the token and `hpclaunch jobs`, since the scheduler may have the job.
#pragma once
#include <functional>
#include <optional>
#include <string>
#include <string_view>

namespace hpclaunch {

struct TokenRecord {
  bool done = false;       // false: started, not known to have ended
  int exit_code = 0;
  std::string out, err;    // what the submission printed
};
std::string token_record_text(const TokenRecord& r);
// nullopt when `text` is no record (a torn write cannot happen: records are written by rename).
std::optional<TokenRecord> parse_token_record(std::string_view text);

// Runs `submit` once for `token` as described above; `tokens_dir` holds the records (made 0700). `submit` prints
// to stdout and stderr and returns its exit status or throws hpclaunch::Error, which is recorded as run_main prints
// it. Returns the exit status to end with.
int submit_once(const std::string& tokens_dir, const std::string& token, const std::function<int()>& submit);

}  // namespace hpclaunch
