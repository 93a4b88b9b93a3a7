// Fuzz target: site profile YAML (site/profile_yaml.cc), as --site-file and $XDG_CONFIG_HOME give it; `extends:`
// finds the built-in profiles; launch.allowed and gpu_request.style are checked against the scheduler as the
// commands check them (dialect/dialect.h's scheduler_checks()). Bad input may only throw hpclaunch::Error
// (file:line:column); a profile that reads is written back by `sites show` as YAML that reads back to the same
// profile.
#include "fuzz_check.h"
#include "dialect/dialect.h"
#include "site/profile_yaml.h"
#include "site/registry.h"
#include "util/error.h"

using namespace hpclaunch;

extern "C" int LLVMFuzzerTestOneInput(const uint8_t* data, size_t size) {
  static const SiteRegistry builtin = builtin_sites(scheduler_checks());
  const ProfileLookup lookup = [](const std::string& name) { return builtin.find(name); };
  ProfileSource source{"fuzz.yaml", std::string(fuzz_text(data, size))};
  std::vector<SiteProfile> profiles;
  try {
    read_header(source);
    profiles = read_profiles(source, lookup, scheduler_checks());
  } catch (const Error&) {
    return 0;
  }
  for (const SiteProfile& profile : profiles) {
    const std::string shown = profile_to_yaml(profile);
    std::vector<SiteProfile> again;
    try {
      again = read_profiles({"shown.yaml", shown}, lookup, scheduler_checks());
    } catch (const Error& e) {
      std::fprintf(stderr, "%s\n--- does not read back:\n%s\n", shown.c_str(), e.what());
      FUZZ_CHECK(!"a profile read back");
    }
    FUZZ_CHECK(again.size() == 1);
    FUZZ_CHECK(profile_to_yaml(again[0]) == shown);
  }
  return 0;
}
