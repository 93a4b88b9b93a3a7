// What went wrong in a job, as the agents pass it around and print it at the end: the root cause of a failed
// run (host, rank, local rank, exit code or signal name, the worker's error file) or a non-worker reason.
#pragma once
#include <nlohmann/json_fwd.hpp>
#include <optional>
#include <string>
#include <string_view>

namespace hpclaunch {

struct Failure {
  std::string host;
  int node_rank = -1;
  int rank = -1;        // -1: not a worker (lost agent, timeout, signal to an agent)
  int local_rank = -1;
  int exit_code = 0;    // meaningful when signal == 0
  int signal = 0;       // the signal that killed the worker
  std::string error;    // the worker's TORCHELASTIC_ERROR_FILE, summarised
  std::string stderr_tail;  // without an error file: the worker's last lines of stderr (JSON "stderr_tail")
  std::string reason;   // set when rank == -1
  bool node_lost = false;  // the agent on `host` vanished (its node or its link died), not a worker's failure
  // A hang (--hang-timeout): the rank whose progress is oldest made none for hang_s seconds, judged by its
  // `hang_source` ("progress" or "output"); `frame` is where its stack was ("train.py:57 `next(loader)`"), and
  // `stacks` the folder of every rank's stacks.
  double hang_s = 0;
  std::string hang_source;
  std::string frame;
  std::string stacks;
  bool hang_stopped = false;       // the rank was stopped or in an uninterruptible wait
  bool hang_waits_for_peers = false;  // its main thread waited in a collective: held by another rank's hang
  int no_progress = 0;  // the job was stopped after this many attempts in a row without progress: not requeued
};

// Whether hang `a` names the rank that holds the others better than hang `b` (agent/progress_watch.h's rule across
// nodes): a stopped or blocked rank, else one that does not wait for its peers, else the longer without progress.
bool better_hang(const Failure& a, const Failure& b);

// The node a failure blames, when the fault is the node's rather than the program's: an agent lost (its node or
// link died) or a worker killed by SIGBUS (a memory error); "" otherwise. `submit --preflight --requeue` and
// `--requeue` runs leave that node out of the next run (`hpclaunch exclude --from-failure`).
std::string faulty_node(const Failure& f);

// One line: "rank 3 (local rank 1) on n1 exited with code 1" or the reason.
std::string describe(const Failure& f);
// "no progress in N attempts in a row: stopped, not requeued": the summary's, status's and wait's words.
std::string no_progress_line(int attempts);
// The block printed at the end of a failed job.
std::string format_summary(const Failure& f, int restart_count, int max_restarts);

// The readable part of a TorchElastic error file ({"message": {"message": ..., "extraInfo": {"py_callstack":
// ...}}} or {"message": "..."}), or the text itself when it is not such JSON. Capped at `limit` bytes.
std::string summarize_error_file(std::string_view contents, size_t limit = 4096);
// summarize_error_file of the file at `path`; "" if it does not exist or is empty.
std::string read_error_file(const std::string& path);

// JOBDIR/failure.json's text (node 0's agent writes it) as a Failure; nullopt when it is not a JSON object (a file
// cut short, or not the agents'). `hpclaunch exclude --from-failure` and `report` read it so.
std::optional<Failure> parse_failure_record(std::string_view text);

void to_json(nlohmann::json& j, const Failure& f);
void from_json(const nlohmann::json& j, Failure& f);

}  // namespace hpclaunch
