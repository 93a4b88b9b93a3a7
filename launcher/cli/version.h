// The commit hpclaunch was built from: `git describe` at build time, written by cmake/BuildInfo.cmake into a
// source that only the hpclaunch executable compiles (so a new commit relinks one object, not the libraries).
#pragma once

namespace hpclaunch {

// "v0.1.0-12-gabc1234-dirty", a hash, or "unknown" when the source was not a git checkout.
const char* build_commit();

}  // namespace hpclaunch
