#include "site/registry.h"
#include "util/file.h"

#include <algorithm>
#include <cstdlib>
#include <filesystem>

#include "util/embedded.h"
#include "util/error.h"
#include "util/strings.h"

namespace hpclaunch {

namespace fs = std::filesystem;

void SiteRegistry::add(const std::vector<ProfileSource>& sources) {
  // Resolve in dependency order: a document whose parent is defined by another pending document waits for it.
  std::vector<std::pair<const ProfileSource*, ProfileHeader>> pending;
  for (const auto& s : sources) pending.emplace_back(&s, read_header(s));
  while (!pending.empty()) {
    bool progressed = false;
    for (auto it = pending.begin(); it != pending.end();) {
      const std::string& parent = it->second.extends;
      bool parent_waits = false;
      for (const auto& other : pending) {
        const auto& names = other.second.names;
        if (other.first != it->first && std::find(names.begin(), names.end(), parent) != names.end())
          parent_waits = true;
      }
      if (parent_waits) {
        ++it;
        continue;
      }
      for (auto& p : read_profiles(*it->first, [this](const std::string& n) { return find(n); }, m_checks))
        m_profiles[p.name] = std::move(p);
      it = pending.erase(it);
      progressed = true;
    }
    if (!progressed) {
      // A cycle: report the first document, whose parent can never be resolved.
      throw Error(pending.front().first->file, "`extends: " + pending.front().second.extends + "` forms a cycle",
                  "make one of these profiles stand alone");
    }
  }
}

const SiteProfile* SiteRegistry::find(const std::string& name) const {
  auto it = m_profiles.find(name);
  return it == m_profiles.end() ? nullptr : &it->second;
}

const SiteProfile& SiteRegistry::get(const std::string& name, const std::string& flag) const {
  if (const SiteProfile* p = find(name)) return *p;
  std::vector<std::string> names;
  for (const auto& [n, _] : m_profiles) names.push_back(n);
  throw Error(flag, "unknown site '" + name + "'" + did_you_mean(name, names),
              "run `hpclaunch sites` for the list, or add one with --site-file");
}

std::vector<const SiteProfile*> SiteRegistry::all() const {
  std::vector<const SiteProfile*> out;
  for (const auto& [_, p] : m_profiles) out.push_back(&p);
  return out;
}

std::vector<ProfileSource> builtin_profile_sources() {
  std::vector<ProfileSource> out;
  for (const auto& f : embedded_files())
    if (f.path.rfind("site-profiles/", 0) == 0) out.push_back({std::string(f.path), std::string(f.data)});
  return out;
}

namespace {

ProfileSource read_source(const fs::path& path, const std::string& flag) {
  auto text = read_file(path.string());
  if (!text) throw Error(flag, "cannot read site file '" + path.string() + "'", "check the path and its permissions");
  return {path.string(), *text};
}

fs::path user_sites_dir() {
  if (const char* xdg = std::getenv("XDG_CONFIG_HOME"); xdg && *xdg) return fs::path(xdg) / "hpclaunch" / "sites";
  if (const char* home = std::getenv("HOME"); home && *home) return fs::path(home) / ".config" / "hpclaunch" / "sites";
  return {};
}

}  // namespace

std::vector<ProfileSource> user_profile_sources(const std::vector<std::string>& site_files) {
  std::vector<ProfileSource> out;
  fs::path dir = user_sites_dir();
  std::error_code ec;
  if (!dir.empty() && fs::is_directory(dir, ec)) {
    std::vector<fs::path> files;
    for (const auto& entry : fs::directory_iterator(dir, ec)) {
      auto ext = entry.path().extension();
      if (ext == ".yaml" || ext == ".yml") files.push_back(entry.path());
    }
    std::sort(files.begin(), files.end());
    for (const auto& f : files) out.push_back(read_source(f, f.string()));
  }
  for (const auto& f : site_files) out.push_back(read_source(f, "--site-file"));
  return out;
}

SiteRegistry builtin_sites(const SchedulerChecks& checks) {
  SiteRegistry reg(checks);
  reg.add(builtin_profile_sources());
  return reg;
}

SiteRegistry load_sites(const std::vector<std::string>& site_files, const SchedulerChecks& checks) {
  SiteRegistry reg = builtin_sites(checks);
  reg.add(user_profile_sources(site_files));
  return reg;
}

}  // namespace hpclaunch
