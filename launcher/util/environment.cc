// Environment snapshots: typed reads with errors that name the variable.
#include "util/environment.h"

#include <fmt/core.h>
#include <unistd.h>

#include "util/error.h"
#include "util/strings.h"

extern char** environ;

namespace hpclaunch {

std::optional<std::string> env_get(const Env& env, std::string_view name) {
  auto it = env.find(name);
  if (it == env.end()) return std::nullopt;
  return it->second;
}

bool env_has(const Env& env, std::string_view name) { return env.find(name) != env.end(); }

std::optional<std::string> env_non_empty(const Env& env, std::string_view name) {
  auto v = env_get(env, name);
  return v && !v->empty() ? v : std::nullopt;
}

std::optional<long long> env_int(const Env& env, std::string_view name, long long min, long long max) {
  auto value = env_get(env, name);
  if (!value) return std::nullopt;
  long long v = 0;
  if (!parse_int(*value, &v) || v < min || v > max)
    throw Error(std::string(name), fmt::format("'{}' is not a whole number in [{}, {}]", *value, min, max),
                "the launcher sets it; unset it if you exported it by hand");
  return v;
}

long long env_require_int(const Env& env, std::string_view name, long long min, long long max,
                          std::string_view source) {
  auto v = env_int(env, name, min, max);
  if (!v)
    throw Error(std::string(name), fmt::format("not set, but this is {} (other variables of it are)", source),
                "start the command through the launcher itself, not in a copied environment");
  return *v;
}

Env capture_environment() {
  Env env;
  for (char** e = environ; e && *e; ++e) {
    std::string_view kv = *e;
    size_t eq = kv.find('=');
    if (eq == std::string_view::npos) continue;
    env.emplace(std::string(kv.substr(0, eq)), std::string(kv.substr(eq + 1)));
  }
  return env;
}

std::string host_name() {
  char name[256] = {};
  return ::gethostname(name, sizeof name - 1) == 0 ? name : "";
}

}  // namespace hpclaunch
