// CLI11's complaints as one-line hpclaunch::Errors that name the flag first: the one mapping of every program
// here (hpclaunch's subcommands, the agent and its torchrun face, hpclaunch-train, hpclaunch-probe).
#pragma once
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

// "--acount: unknown option (did you mean '--account'?); see `PROGRAM --help`".
Error unknown_option(const std::string& flag, const CLI::App& app, const std::string& program);

// The word CLI11 did not expect first ("" when its message names none), and whether it looks like a flag.
std::string first_unexpected(const CLI::ParseError& e);
bool looks_like_flag(const std::string& word);

}  // namespace hpclaunch
