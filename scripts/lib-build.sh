# Sourced by scripts/demo.sh, scripts/test.sh and scripts/fuzz.sh, and by the tests (tests/integration/lib.sh): how
# a build folder is configured, so that the demo's objects serve the tests and t0720's static launcher links them
# from ccache (tests/integration/lib-static.sh reads the type and flags back from CMakeCache.txt).

# use_ccache SRC: ccache for the builds configured after it, when installed (install-deps.sh installs it): sets
# `ccache_launcher` to the CMake argument (empty without ccache), and exports relative paths in its keys, so that
# another checkout or build folder of the same sources at the same depth hits the same entries.
use_ccache() {
  ccache_launcher=()
  command -v ccache >/dev/null || return 0
  export CCACHE_BASEDIR=${CCACHE_BASEDIR:-$1} CCACHE_NOHASHDIR=${CCACHE_NOHASHDIR:-1}
  ccache_launcher=(-DCMAKE_CXX_COMPILER_LAUNCHER=ccache)
}

# configure_build ROOT BUILD [CMAKE_ARG...]: the project's default type and flags (RelWithDebInfo, -O2 -g1: set in
# CMakeLists.txt, so that a build configured by hand, as README's install line is, has the same objects), with
# ccache (use_ccache).
configure_build() {
  local src=$1 build=$2
  shift 2
  use_ccache "$src"
  cmake -S "$src" -B "$build" "${ccache_launcher[@]}" "$@" >/dev/null
}
