# Sourced by scripts/demo.sh and scripts/test.sh: the one configuration of the build folder both use, so that the
# demo's objects serve the tests and t0720's static launcher links them from ccache (tests/integration/lib-static.sh
# reads the type and flags back from CMakeCache.txt).
#
# configure_build ROOT BUILD [CMAKE_ARG...]: the project's default type and flags (RelWithDebInfo, -O2 -g1: set in
# CMakeLists.txt, so that a build configured by hand, as README's install line is, has the same objects), and ccache
# when installed (install-deps.sh installs it): relative paths in its keys, so another checkout hits the same entries.
configure_build() {
  local src=$1 build=$2
  shift 2
  local launcher=()
  if command -v ccache >/dev/null; then
    export CCACHE_BASEDIR=${CCACHE_BASEDIR:-$src} CCACHE_NOHASHDIR=1
    launcher=(-DCMAKE_CXX_COMPILER_LAUNCHER=ccache)
  fi
  cmake -S "$src" -B "$build" "${launcher[@]}" "$@" >/dev/null
}
