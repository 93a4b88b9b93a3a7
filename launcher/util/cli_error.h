// How the programs here (hpclaunch with its subcommands, the agent and its torchrun face, hpclaunch-train,
// hpclaunch-probe) read their command line and end on an error: one CLI11 parse, CLI11's complaints as one-line
// hpclaunch::Errors that name the flag first, and one main() wrapper that prints an error once and exits with its
// code.
#pragma once
#include <cstdio>
#include <functional>
#include <string>
#include <vector>

#include "util/error.h"

namespace CLI {
class App;
class ParseError;
}  // namespace CLI

namespace hpclaunch {

// `e`, thrown while `app` parsed, as an Error whose fix is "see `PROGRAM --help`" (`program` as the user types it:
// "hpclaunch submit", "torchrun", "hpclaunch-train"). A bad value names its flag ("--nodes: 'two' is not a valid
// value"); an unknown flag gets a did-you-mean; a complaint about no one flag names `app`'s name, unless that is
// `program` itself (a program of its own, whose errors already start with its name). A word that is no flag
// gets `stray_fix` (what to do with it) before the "see".
Error cli_error(const CLI::ParseError& e, const CLI::App& app, const std::string& program,
                const std::string& stray_fix = {});

// How a parse ended: the flags are read (go on), or --help / --version was asked for (print it, exit 0).
enum class Parsed { flags, help, version };

// Parses `args` (the words after the program or subcommand name, in order) with `app`. A CLI11 complaint is
// thrown as cli_error(e, app, program, stray_fix).
Parsed parse_cli(CLI::App& app, const std::vector<std::string>& args, const std::string& program,
                 const std::string& stray_fix = {});

// A program's main(): returns what `body` returns; an hpclaunch::Error thrown by it is printed once to `err` as
// "PROGRAM: error: WHERE: WHAT; FIX" and its exit code returned (2 bad input, 1 failure), any other exception as
// the first line of its message with exit 1 (LibTorch's errors carry a backtrace after it). Stdout is flushed
// first, so the error comes after everything already said.
int run_main(const std::string& program, const std::function<int()>& body, std::FILE* err = stderr);

// "--acount: unknown option (did you mean '--account'?); see `PROGRAM --help`".
Error unknown_option(const std::string& flag, const CLI::App& app, const std::string& program);

// The word CLI11 did not expect first ("" when its message names none), and whether it looks like a flag.
std::string first_unexpected(const CLI::ParseError& e);
bool looks_like_flag(const std::string& word);

}  // namespace hpclaunch
