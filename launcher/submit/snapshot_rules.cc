#include "submit/snapshot_rules.h"

#include <fmt/core.h>

#include <algorithm>
#include <filesystem>
#include <map>

#include "util/byte_size.h"
#include "util/error.h"
#include "util/strings.h"

namespace hpclaunch {

namespace {

// How many of the largest top-level entries the refusal names.
constexpr size_t k_largest_named = 3;

std::uint64_t max_bytes_of(const std::string& text, const std::string& origin) {
  if (auto bytes = parse_byte_size(text)) return *bytes;
  throw Error(origin, "'" + text + "' is not a size", "give one such as 512M or 2G (K, M, G, T: powers of 1024)");
}

}  // namespace

SnapshotSettings snapshot_settings(const JobRequest& request, const SiteProfile& site) {
  SnapshotSettings s;
  s.on = request.snapshot.value_or(site.snapshot);
  s.exclude = site.snapshot_exclude;
  s.exclude.insert(s.exclude.end(), request.snapshot_exclude.begin(), request.snapshot_exclude.end());
  if (!request.snapshot_max_size.empty()) {
    s.max_origin = request.snapshot_max_size_origin.empty() ? "--snapshot-max-size" : request.snapshot_max_size_origin;
    s.max_bytes = max_bytes_of(request.snapshot_max_size, s.max_origin);
  } else if (!site.snapshot_max_size.empty()) {
    s.max_origin = "site " + site.name + "'s snapshot_max_size";
    s.max_bytes = max_bytes_of(site.snapshot_max_size, s.max_origin);
  }
  return s;
}

IgnoreRules snapshot_excludes(const SnapshotSettings& settings) {
  IgnoreRules rules;
  rules.add_pattern(".git/");
  rules.add_pattern("hpclaunch-jobs/");
  for (const auto& p : settings.exclude) rules.add_pattern(p);
  return rules;
}

std::string snapshot_size_refusal(const std::vector<SnapshotEntry>& entries, const SnapshotSettings& settings,
                                  const std::string& root) {
  std::uint64_t total = 0;
  std::map<std::string, std::uint64_t> top;  // "data/" (its files summed) or "model.pt"
  for (const auto& e : entries) {
    total += e.bytes;
    size_t slash = e.path.find('/');
    top[slash == std::string::npos ? e.path : e.path.substr(0, slash + 1)] += e.bytes;
  }
  if (total <= settings.max_bytes) return "";
  std::vector<std::pair<std::string, std::uint64_t>> largest(top.begin(), top.end());
  std::stable_sort(largest.begin(), largest.end(), [](const auto& a, const auto& b) { return a.second > b.second; });
  if (largest.size() > k_largest_named) largest.resize(k_largest_named);
  std::vector<std::string> named;
  for (const auto& [path, bytes] : largest) named.push_back(fmt::format("{} ({})", path, format_bytes(bytes)));
  std::string limit = format_bytes(settings.max_bytes);
  if (!settings.max_origin.empty()) limit += ", " + settings.max_origin;
  return fmt::format("the snapshot of {} would be {} in {} files, over the limit of {}; largest: {}", root,
                     format_bytes(total), entries.size(), limit, join(named, ", "));
}

std::vector<std::string> split_nul(std::string_view text) {
  std::vector<std::string> out;
  for (auto& part : split(text, '\0'))
    if (!part.empty()) out.push_back(std::move(part));
  return out;
}

bool porcelain_dirty(std::string_view porcelain_z, const IgnoreRules& excludes) {
  std::vector<std::string> fields = split_nul(porcelain_z);
  for (size_t i = 0; i < fields.size(); ++i) {
    const std::string& f = fields[i];
    if (f.size() < 4) continue;
    std::string path = f.substr(3);
    if (f[0] == 'R' || f[0] == 'C') ++i;  // a rename's or copy's origin follows
    bool dir = !path.empty() && path.back() == '/';
    if (dir) path.pop_back();
    bool left_out = excludes.ignored_with_parents(path) || (dir && excludes.ignored(path, true));
    if (!left_out) return true;
  }
  return false;
}

std::string snapshot_workdir(const std::string& snapshot_dir, const std::string& root, const std::string& cwd) {
  namespace fs = std::filesystem;
  fs::path rel = fs::path(cwd).lexically_normal().lexically_relative(fs::path(root).lexically_normal());
  if (rel.empty() || rel == "." || *rel.begin() == "..") return snapshot_dir;
  std::string out = (fs::path(snapshot_dir) / rel).lexically_normal().string();
  if (out.size() > 1 && out.back() == '/') out.pop_back();  // "/repo/src/" was given
  return out;
}

}  // namespace hpclaunch
