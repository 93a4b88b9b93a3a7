#!/usr/bin/env bash
# bench/trainer/gather/run.sh [THREADS...]: builds gather_bench.cc against python3's torch (the machine's LibTorch)
# and runs it with each intra-op thread count (default: the CPU count). Prints the timings; any machine, a GPU
# machine for the pinned buffer and the copy to the GPU. -fopenmp: ATen's at::parallel_for is inline and parallel
# only in code compiled for OpenMP (the wheels' backend), which the trainer is not: it gathers on at::launch's pool.
set -euo pipefail
here=$(cd "$(dirname "$0")" && pwd)
py=${PYTHON:-python3}
torch_dir=$("$py" -c 'import os, torch; print(os.path.dirname(torch.__file__))')
std=$("$py" -c 'import torch; v = tuple(int(x) for x in torch.__version__.split("+")[0].split(".")[:2]); print("c++20" if v >= (2, 13) else "c++17")')
abi=$("$py" -c 'import torch; print(int(torch.compiled_with_cxx11_abi()))')
bin=${TMPDIR:-/tmp}/gather_bench
cuda_libs=()
# shellcheck disable=SC2054  # linker flags, the commas are theirs
[ ! -e "$torch_dir/lib/libtorch_cuda.so" ] || cuda_libs=(-Wl,--no-as-needed -ltorch_cuda -lc10_cuda -Wl,--as-needed)
g++ -O2 -fopenmp -std="$std" -D_GLIBCXX_USE_CXX11_ABI="$abi" "$here/gather_bench.cc" -I"$torch_dir/include" \
  -I"$torch_dir/include/torch/csrc/api/include" -L"$torch_dir/lib" "${cuda_libs[@]}" -ltorch -ltorch_cpu -lc10 \
  -Wl,-rpath,"$torch_dir/lib" -pthread -o "$bin"
[ $# -gt 0 ] || set -- "$(nproc)"
for t in "$@"; do "$bin" "$t"; done
