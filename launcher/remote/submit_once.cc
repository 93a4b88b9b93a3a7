#include "remote/submit_once.h"

#include <fcntl.h>
#include <unistd.h>

#include <cerrno>
#include <csignal>
#include <cstdio>
#include <cstring>
#include <filesystem>
#include <nlohmann/json.hpp>

#include "remote/far_side.h"
#include "util/error.h"
#include "util/file.h"

namespace hpclaunch {

namespace {

namespace fs = std::filesystem;

// stdout and stderr sent to BASE.out and BASE.err while it lives, then put back; their text is read by
// `finish`, which also puts them back.
class CapturedOutput {
 public:
  explicit CapturedOutput(const std::string& base) : m_out_path(base + ".out"), m_err_path(base + ".err") {
    std::fflush(stdout);
    std::fflush(stderr);
    m_saved_out = dup(STDOUT_FILENO);
    m_saved_err = dup(STDERR_FILENO);
    redirect(m_out_path, STDOUT_FILENO);
    redirect(m_err_path, STDERR_FILENO);
  }
  ~CapturedOutput() { restore(); }
  std::pair<std::string, std::string> finish() {
    restore();
    auto text = [](const std::string& p) {
      std::string t = read_file(p).value_or("");
      fs::remove(p);
      return t;
    };
    return {text(m_out_path), text(m_err_path)};
  }

 private:
  static void redirect(const std::string& path, int target) {
    int fd = open(path.c_str(), O_WRONLY | O_CREAT | O_TRUNC | O_CLOEXEC, 0600);
    if (fd < 0) throw failure(path, std::string("cannot write the submission's output: ") + std::strerror(errno));
    dup2(fd, target);
    close(fd);
  }
  void restore() {
    if (m_saved_out < 0) return;
    std::fflush(stdout);
    std::fflush(stderr);
    dup2(m_saved_out, STDOUT_FILENO);
    dup2(m_saved_err, STDERR_FILENO);
    close(m_saved_out);
    close(m_saved_err);
    m_saved_out = m_saved_err = -1;
  }
  std::string m_out_path, m_err_path;
  int m_saved_out = -1, m_saved_err = -1;
};

void write_record(const std::string& path, const TokenRecord& r) {
  if (!write_file_atomic(path, token_record_text(r), 0600))
    throw failure(path, std::string("cannot record the submit token: ") + std::strerror(errno),
                  "nothing was submitted; make the folder writable and submit again");
}

// The recorded output printed again, as the first attempt would have printed it.
int replay(const TokenRecord& r) {
  std::fwrite(r.out.data(), 1, r.out.size(), stdout);
  std::fflush(stdout);
  std::fwrite(r.err.data(), 1, r.err.size(), stderr);
  return r.exit_code;
}

}  // namespace

std::string token_record_text(const TokenRecord& r) {
  nlohmann::json j = {{"state", r.done ? "done" : "started"}};
  if (r.done) {
    j["exit_code"] = r.exit_code;
    j["out"] = r.out;
    j["err"] = r.err;
  }
  return j.dump() + "\n";
}

std::optional<TokenRecord> parse_token_record(std::string_view text) {
  nlohmann::json j = nlohmann::json::parse(text, nullptr, false);
  if (!j.is_object() || !j.contains("state") || !j["state"].is_string()) return std::nullopt;
  TokenRecord r;
  const std::string state = j["state"];
  if (state == "started") return r;
  if (state != "done" || !j.value("exit_code", nlohmann::json()).is_number_integer() ||
      !j.value("out", nlohmann::json()).is_string() || !j.value("err", nlohmann::json()).is_string())
    return std::nullopt;
  r.done = true;
  r.exit_code = j["exit_code"];
  r.out = j["out"];
  r.err = j["err"];
  return r;
}

int submit_once(const std::string& tokens_dir, const std::string& token, const std::function<int()>& submit) {
  if (!is_submit_token(token))
    throw Error("--submit-token", "'" + token + "' is not a submit token (32 hex digits)",
                "leave it to --remote, which makes one per submit");
  std::error_code ec;
  fs::create_directories(tokens_dir, ec);
  fs::permissions(tokens_dir, fs::perms::owner_all, ec);
  const std::string base = (fs::path(tokens_dir) / token).string();
  FileLock lock(base + ".lock");  // a retry waits here while the first attempt runs
  if (!lock.held())
    throw failure("--submit-token", "cannot lock the submit token: " + lock.error(), "nothing was submitted");
  const std::string record_path = base + ".json";
  if (std::optional<std::string> text = read_file(record_path)) {
    std::optional<TokenRecord> r = parse_token_record(*text);
    if (r && r->done) return replay(*r);
    throw failure("--submit-token", "an earlier submit with token " + token +
                                        " stopped before it recorded its end, so the scheduler may have its job",
                  "nothing was submitted again; `hpclaunch jobs` lists what was (" + record_path + ")");
  }
  write_record(record_path, TokenRecord{});
  // From here the submission finishes even when the connection that asked for it is gone.
  std::signal(SIGHUP, SIG_IGN);
  std::signal(SIGPIPE, SIG_IGN);
  TokenRecord done;
  done.done = true;
  {
    CapturedOutput captured(base);
    try {
      done.exit_code = submit();
    } catch (const Error& e) {
      std::fflush(stdout);
      std::fprintf(stderr, "hpclaunch: error: %s\n", e.what());
      done.exit_code = e.exit_code();
    } catch (const std::exception& e) {
      std::fflush(stdout);
      std::fprintf(stderr, "hpclaunch: error: %s\n", e.what());
      done.exit_code = k_exit_failure;
    }
    std::tie(done.out, done.err) = captured.finish();
  }
  write_record(record_path, done);
  return replay(done);
}

}  // namespace hpclaunch
