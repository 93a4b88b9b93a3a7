#!/usr/bin/env bash
# t0513: the CUDA side of the GPU step compiles (issue 10 §4). No GPU and no CUDA LibTorch here, so it cannot be
# linked or run: trainer/cuda_graph.cc (at::cuda::CUDAGraph capture and replay on a side stream, NCCL's version),
# and the units that take the CUDA/NCCL branches (ddp.cc through c10d_compat.h, trainer.cc) are compiled
# syntax-only with HPCTRAIN_WITH_NCCL against Debian's LibTorch 1.13 headers (which ship ATen/cuda and c10/cuda)
# and the CUDA toolkit's headers in /usr/local/cuda/include (NCCL's too). Debian lacks one generated header,
# c10/cuda/impl/cuda_cmake_macros.h; a one-line stand-in is put first on the include path. Skips (77) where
# those headers are missing. A minute or two (three Torch units parsed).
set -euo pipefail
source "$(dirname "$0")/lib-trainer.sh"
src=$HPCLAUNCH_SOURCE_DIR
cuda=${CUDA_INCLUDE:-/usr/local/cuda/include}
fail() { echo "FAIL: $*"; exit 1; }
for h in /usr/include/ATen/cuda/CUDAGraph.h /usr/include/c10/cuda/CUDAStream.h "$cuda/cuda_runtime_api.h" "$cuda/nccl.h"; do
  [ -f "$h" ] || { echo "skip: $h missing: the CUDA side cannot be compiled here"; exit 77; }
done
work=$(mktemp -d)
trap 'rm -rf "$work"' EXIT
mkdir -p "$work/c10/cuda/impl"
echo '#define C10_CUDA_BUILD_SHARED_LIBS' >"$work/c10/cuda/impl/cuda_cmake_macros.h"
for f in cuda_graph.cc ddp.cc trainer.cc; do
  g++ -std=c++17 -fsyntax-only -DUSE_C10D_GLOO -DUSE_DISTRIBUTED -DUSE_C10D_NCCL -DHPCTRAIN_WITH_NCCL=1 \
    -DHPCLAUNCH_VERSION='"check"' -I"$work" -I"$src/trainer" -I"$src/launcher" -isystem "$cuda" \
    -isystem /usr/include/torch/csrc/api/include "$src/trainer/$f" 2>"$work/err" ||
    fail "$f does not compile with CUDA and NCCL: $(grep -m5 error "$work/err")"
  echo "ok: $f (CUDA, NCCL; syntax only)"
done
echo PASS
