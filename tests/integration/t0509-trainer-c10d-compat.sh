#!/usr/bin/env bash
# t0509: trainer/c10d_compat.h against every LibTorch found here (issue 10 §3): Debian's 1.13 (the one the
# build uses) and, when `python3 -c 'import torch'` finds a PyTorch of 2.0 or later (a pip/conda install, a
# module), that one too, with its own C++ ABI flag: tests/tools/c10d_compat_check.cc and, for the newer torch,
# the trainer's DDP unit (trainer/ddp.cc) compile syntax-only. With no newer PyTorch installed it says so and
# checks 1.13 alone. A few seconds per LibTorch (a minute for ddp.cc against a 2.x).
set -euo pipefail
source "$(dirname "$0")/lib-trainer.sh"
src=$HPCLAUNCH_SOURCE_DIR
fail() { echo "FAIL: $*"; exit 1; }
check() {  # NAME INCLUDE_ROOT ABI FILE...
  local name=$1 inc=$2 abi=$3 f dirs=() gloo=()
  shift 3
  [ "$inc" = /usr/include ] || dirs=(-isystem "$inc")  # the system's is searched anyway (and must stay last)
  # As trainer/CMakeLists.txt decides: gloo where this LibTorch's headers have it (the pip wheels do not).
  [ -f "$inc/gloo/algorithm.h" ] && gloo=(-DHPCTRAIN_WITH_GLOO)
  # USE_C10D_GLOO and USE_DISTRIBUTED: what the torch target's interface defines (ProcessGroupGloo.hpp needs them).
  for f in "$@"; do
    g++ -std=c++17 -fsyntax-only -D_GLIBCXX_USE_CXX11_ABI="$abi" -DUSE_C10D_GLOO -DUSE_DISTRIBUTED -DHPCLAUNCH_VERSION='"check"' "${gloo[@]}" \
      -I"$src/trainer" -I"$src/launcher" "${dirs[@]}" -isystem "$inc/torch/csrc/api/include" "$f" \
      2>"$work/err" || fail "$(basename "$f") does not compile against $name: $(head -20 "$work/err")"
    echo "ok: $(basename "$f") against $name"
  done
}
work=$(mktemp -d)
trap 'rm -rf "$work"' EXIT
[ -f /usr/include/torch/csrc/distributed/c10d/ProcessGroupGloo.hpp ] || fail "Debian's libtorch-dev headers are missing"
check "Debian's LibTorch 1.13" /usr/include 1 "$src/tests/tools/c10d_compat_check.cc"

newer=$(/usr/bin/env python3 - 2>/dev/null <<'PY' || true
import os, torch
major = int(torch.__version__.split(".")[0])
if major >= 2:
    print(torch.__version__, os.path.join(os.path.dirname(torch.__file__), "include"), int(torch._C._GLIBCXX_USE_CXX11_ABI))
PY
)
if [ -z "$newer" ]; then
  echo "note: no PyTorch 2.x importable by python3 here: c10d_compat.h's 2.x branch is not compiled (only 1.13)"
  exit 0
fi
read -r version inc abi <<<"$newer"
check "PyTorch $version" "$inc" "$abi" "$src/tests/tools/c10d_compat_check.cc" "$src/trainer/ddp.cc"
echo PASS
