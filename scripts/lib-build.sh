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

# use_ninja: the folders configured after it use Ninja when it is installed (install-deps.sh installs it), through
# CMake's CMAKE_GENERATOR variable: a folder not configured yet takes it, a configured one keeps its own generator.
# Ninja compiles a library's objects while the layers below it still link, where make's files wait for each library
# first: on 2 cores the demo's build took 151 s instead of make's 197 s, for the same CPU time (docs/install.md).
# Exported, so the folders the tests configure (tests/integration/lib.sh takes the main build's generator) and
# README's install line in t0710 get the same compile lines, and so the main build's objects from ccache.
use_ninja() {
  [ -n "${CMAKE_GENERATOR:-}" ] || ! command -v ninja >/dev/null || export CMAKE_GENERATOR=Ninja
}

# configure_build ROOT BUILD [CMAKE_ARG...]: the project's default type and flags (RelWithDebInfo, -O2 -g1: set in
# CMakeLists.txt, so that a build configured by hand, as README's install line is, has the same objects), with
# ccache (use_ccache) and Ninja (use_ninja).
configure_build() {
  local src=$1 build=$2
  shift 2
  use_ccache "$src"
  use_ninja
  cmake -S "$src" -B "$build" "${ccache_launcher[@]}" "$@" >/dev/null
}

# configure_fuzz_build ROOT BUILD: the clang build with ASan, UBSan and libFuzzer's coverage in every library
# (HPCLAUNCH_FUZZ, cmake/Sanitizers.cmake), with the unit tests. One configuration for both of its users, so that
# neither reconfigures (and so rebuilds) the other's folder: scripts/fuzz.sh (t0065) builds the fuzz targets in it,
# t0060 the unit tests.
configure_fuzz_build() {
  local src=$1 build=$2
  command -v clang++ >/dev/null || { echo "the fuzz build needs clang++, which is not found: run scripts/install-deps.sh" >&2; return 2; }
  use_ccache "$src"
  use_ninja
  cmake -S "$src" -B "$build" -DCMAKE_BUILD_TYPE=RelWithDebInfo -DCMAKE_CXX_COMPILER=clang++ -DHPCLAUNCH_FUZZ=ON \
    -DHPCLAUNCH_BUILD_TESTS=ON "${ccache_launcher[@]}" >/dev/null
}
