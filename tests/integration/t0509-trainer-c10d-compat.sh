#!/usr/bin/env bash
# t0509: trainer/c10d_compat.h against both ends of the LibTorches the trainer supports: Debian's 1.13 (the one the
# main build uses, C++17) and torch 2.15 from PyPI in the peers' venv (C++20, its own C++ ABI flag):
# tests/tools/c10d_compat_check.cc compiles syntax-only against each (10 s of CPU for 2.15). The trainer's own
# units, trainer/ddp.cc among them, are compiled against 1.13 by the main build and against 2.15, with warnings as
# errors, by t0513, which builds and tests the whole trainer with it (ddp.cc's syntax check here, 15 s of CPU, was
# that again).
set -euo pipefail
source "$(dirname "$0")/lib-trainer.sh"
source "$(dirname "$0")/lib.sh"
src=$HPCLAUNCH_SOURCE_DIR
check() {  # NAME INCLUDE_ROOT ABI STD FILE...
  local name=$1 inc=$2 abi=$3 std=$4 f dirs=() gloo=()
  shift 4
  [ "$inc" = /usr/include ] || dirs=(-isystem "$inc")  # the system's is searched anyway (and must stay last)
  # As trainer/CMakeLists.txt decides: gloo where this LibTorch's headers have it (the pip wheels do not).
  [ -f "$inc/gloo/algorithm.h" ] && gloo=(-DHPCTRAIN_WITH_GLOO)
  # USE_C10D_GLOO and USE_DISTRIBUTED: what the torch target's interface defines (ProcessGroupGloo.hpp needs them).
  for f in "$@"; do
    g++ -std=c++"$std" -fsyntax-only -D_GLIBCXX_USE_CXX11_ABI="$abi" -DUSE_C10D_GLOO -DUSE_DISTRIBUTED -DHPCLAUNCH_VERSION='"check"' "${gloo[@]}" \
      -I"$src/trainer" -I"$src/launcher" "${dirs[@]}" -isystem "$inc/torch/csrc/api/include" "$f" \
      2>"$test_tmp/err" || fail "$(basename "$f") does not compile against $name: $(head -20 "$test_tmp/err")"
    echo "ok: $(basename "$f") against $name"
  done
}
[ -f /usr/include/torch/csrc/distributed/c10d/ProcessGroupGloo.hpp ] || fail "Debian's libtorch-dev headers are missing"
check "Debian's LibTorch 1.13" /usr/include 1 17 "$src/tests/tools/c10d_compat_check.cc"

# torch 2.15 from PyPI (the peers' venv: peer_python fails where install-deps.sh has not made it): its C++ ABI flag,
# and C++20, which its headers need.
newer=$("$(peer_python)" -c '
import os, torch
include = os.path.join(os.path.dirname(torch.__file__), "include")
print(torch.__version__, include, int(torch._C._GLIBCXX_USE_CXX11_ABI))') ||
  fail "the peers' venv's python does not import torch"
read -r version inc abi <<<"$newer"
case $version in 2.*) ;; *) fail "the peers' venv has torch $version, not 2.x" ;; esac
check "PyTorch $version" "$inc" "$abi" 20 "$src/tests/tools/c10d_compat_check.cc"
echo PASS
