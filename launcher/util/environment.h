// A snapshot of the process environment: the rank sources and rendezvous rules are pure functions over one,
// so tests build it from a literal and only cli/ reads the real environment.
#pragma once
#include <map>
#include <optional>
#include <string>
#include <string_view>

namespace hpclaunch {

using Env = std::map<std::string, std::string, std::less<>>;

// The variable's value, or nullopt if it is unset. Set but empty counts as set.
std::optional<std::string> env_get(const Env& env, std::string_view name);
bool env_has(const Env& env, std::string_view name);
// The variable's value if it is set and not empty (a scheduler's id variables), else nullopt.
std::optional<std::string> env_non_empty(const Env& env, std::string_view name);
// The variable as an int in [min, max]; nullopt if unset. Throws hpclaunch::Error naming the variable if it is
// set but not a whole number in range.
std::optional<long long> env_int(const Env& env, std::string_view name, long long min, long long max);
// Like env_int but the variable must be set: throws naming `source` ("a Slurm task") and the variable if not.
long long env_require_int(const Env& env, std::string_view name, long long min, long long max,
                          std::string_view source);

// The environment of this process (effect).
Env capture_environment();
// This machine's host name (gethostname; effect), "" when it has none.
std::string host_name();

}  // namespace hpclaunch
