// The one error type for input the user can fix. Thrown anywhere, printed once by cli/main.cc as
// "hpclaunch: error: WHERE: WHAT; FIX" and turned into a non-zero exit.
#pragma once
#include <stdexcept>
#include <string>

namespace hpclaunch {

// Exit codes: 2 bad input (nothing was written or submitted), 1 a failure while doing the work.
inline constexpr int k_exit_bad_input = 2;
inline constexpr int k_exit_failure = 1;
// A worker's "I saved; requeue me" (hpclaunch-train's too, docs/RUNTIME.md): the rendered Slurm script and the local
// runner (schedulers/local/backend_job.h) run the job again on it.
inline constexpr int k_exit_requeue = 99;
// The job made no progress in --no-progress-limit attempts in a row (agent/rendezvous_state.h): the rendered
// scripts and the local runner do not requeue it. 93, as NVIDIA's ft_launcher says "do not requeue".
inline constexpr int k_exit_no_progress = 93;

class Error : public std::runtime_error {
 public:
  // where: "--nodes", "site-profiles/x.yaml:3:5", "PBS_NODEFILE"...; what: what is wrong; fix: what to do.
  Error(std::string where, std::string what, std::string fix = {}, int exit_code = k_exit_bad_input)
      : std::runtime_error(compose(where, what, fix)),
        m_where(std::move(where)),
        m_exit_code(exit_code) {}

  const std::string& where() const { return m_where; }
  int exit_code() const { return m_exit_code; }

 private:
  static std::string compose(const std::string& where, const std::string& what, const std::string& fix) {
    std::string s = where.empty() ? what : where + ": " + what;
    if (!fix.empty()) s += "; " + fix;
    return s;
  }
  std::string m_where;
  int m_exit_code;
};

// A failure of the work itself (a scheduler command failed, a file could not be written).
inline Error failure(std::string where, std::string what, std::string fix = {}) {
  return Error(std::move(where), std::move(what), std::move(fix), k_exit_failure);
}

}  // namespace hpclaunch
