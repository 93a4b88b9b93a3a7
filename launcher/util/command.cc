#include "util/command.h"

#include <boost/asio/io_context.hpp>
#include <boost/process.hpp>
#include <csignal>
#include <cstring>
#include <filesystem>
#include <future>

namespace hpclaunch {

namespace bp = boost::process;

ProcessResult run_capture(const std::vector<std::string>& argv) {
  ProcessResult r;
  boost::filesystem::path exe = argv[0].find('/') == std::string::npos ? bp::search_path(argv[0]) : argv[0];
  if (exe.empty()) {
    r.exit_code = 127;
    r.err = argv[0] + ": command not found";
    return r;
  }
  try {
    boost::asio::io_context ios;
    std::future<std::string> out, err;
    std::vector<std::string> args(argv.begin() + 1, argv.end());
    bp::child c(exe, bp::args(args), bp::std_in.close(), bp::std_out > out, bp::std_err > err, ios);
    ios.run();
    c.wait();
    r.out = out.get();
    r.err = err.get();
    int native = c.native_exit_code();
    r.exit_code = WIFSIGNALED(native) ? 128 + WTERMSIG(native) : c.exit_code();
  } catch (const bp::process_error& e) {
    r.exit_code = 127;
    r.err = argv[0] + ": " + e.what();
  }
  return r;
}

std::string self_executable() {
  std::error_code ec;
  auto p = std::filesystem::read_symlink("/proc/self/exe", ec);
  return ec ? std::string("hpclaunch") : p.string();
}

std::string signal_name(int sig) {
  switch (sig) {
    case SIGHUP: return "SIGHUP";
    case SIGINT: return "SIGINT";
    case SIGQUIT: return "SIGQUIT";
    case SIGILL: return "SIGILL";
    case SIGABRT: return "SIGABRT";
    case SIGBUS: return "SIGBUS";
    case SIGFPE: return "SIGFPE";
    case SIGKILL: return "SIGKILL";
    case SIGUSR1: return "SIGUSR1";
    case SIGSEGV: return "SIGSEGV";
    case SIGUSR2: return "SIGUSR2";
    case SIGPIPE: return "SIGPIPE";
    case SIGALRM: return "SIGALRM";
    case SIGTERM: return "SIGTERM";
    default: return "signal " + std::to_string(sig);
  }
}

}  // namespace hpclaunch
