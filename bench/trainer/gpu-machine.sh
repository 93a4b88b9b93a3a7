#!/usr/bin/env bash
# The one prepared script for a lent GPU machine (../shared/GPU-DEVICE.md has what such a machine has: a CUDA
# PyTorch as `python3`, CMake, g++, nvcc, none of the launcher's libraries, and nothing can be fetched there). Two
# halves:
#   bench/trainer/gpu-machine.sh --fetch            here: the launcher's libraries as Debian packages (apt-get
#                                                   download, 18 MB) into build-gpu-deps/ (ignored by git; the
#                                                   device call carries it)
#   bench/trainer/gpu-machine.sh [--budget S] [REPEATS]
#                                                   there: unpacks them under /tmp/deps (never into /), builds
#                                                   hpclaunch-train and hpclaunch-probe against the machine's
#                                                   PyTorch, then runs bench/trainer/gpu.sh with what is left of
#                                                   the budget (default 420 s in all). Everything goes to $OUT
#                                                   (default build-gpu-out) as it happens: build.log, runs.log,
#                                                   results.jsonl and results.md (a line per run), and at the end
#                                                   RESULTS-section.md (the table, naming the GPU, driver, torch,
#                                                   CUDA and NCCL) — six files, under the eight a call brings back.
# A build that fails is recorded as failed, and the Python peers are measured all the same.
set -euo pipefail
here=$(cd "$(dirname "$0")" && pwd)
root=$(cd "$here/../.." && pwd)
debs=$root/build-gpu-deps
packages=(libboost1.81-dev libboost-filesystem1.81-dev libboost-filesystem1.81.0 libboost-atomic1.81.0
  libboost-atomic1.81-dev libfmt-dev libfmt9 libyaml-cpp-dev libyaml-cpp0.7 libcli11-dev libkainjow-mustache-dev
  nlohmann-json3-dev libssl-dev libssl3 libhwloc-dev libhwloc15 zlib1g-dev pkgconf pkgconf-bin libpkgconf3)
if [ "${1:-}" = --fetch ]; then
  mkdir -p "$debs"
  (cd "$debs" && apt-get download "${packages[@]}")
  echo "gpu-machine.sh: $(find "$debs" -name '*.deb' | wc -l) packages in $debs; carry build-gpu-deps to the GPU machine"
  exit 0
fi
start=$SECONDS
budget=420
if [ "${1:-}" = --budget ]; then
  budget=${2:?"gpu-machine.sh: --budget needs seconds"}
  shift 2
fi
repeats=${1:-1}
out=${OUT:-$root/build-gpu-out}
mkdir -p "$out"
records="python3 $here/gpu_records.py"
[ -n "$(find "$debs" -name '*.deb' 2>/dev/null)" ] ||
  { echo "gpu-machine.sh: no packages in $debs: run bench/trainer/gpu-machine.sh --fetch first (and carry it)" >&2; exit 1; }
deps=/tmp/deps
mkdir -p "$deps"
for f in "$debs"/*.deb; do dpkg -x "$f" "$deps"; done
ln -sf /usr/lib/x86_64-linux-gnu/libz.so.1 "$deps/usr/lib/x86_64-linux-gnu/libz.so"  # Debian's link dangles there
export PATH=$PATH:$deps/usr/bin CMAKE_PREFIX_PATH=$deps/usr PKG_CONFIG_SYSROOT_DIR=$deps \
  PKG_CONFIG_PATH=$deps/usr/lib/x86_64-linux-gnu/pkgconfig:$deps/usr/share/pkgconfig \
  LD_LIBRARY_PATH=$deps/usr/lib/x86_64-linux-gnu${LD_LIBRARY_PATH:+:$LD_LIBRARY_PATH}
build=/tmp/hpclaunch-gpu-build
generator=()
command -v ninja >/dev/null && generator=(-G Ninja)

# (1) The build, its configure and compile in build.log; a failure is one record, and the rest goes on.
build_start=$SECONDS
rc=0
extra_cmake=()
read -r -a extra_cmake <<<"${HPCLAUNCH_GPU_CMAKE_ARGS:-}"  # more configure arguments, should the machine need any
{
  cmake -S "$root" -B "$build" "${generator[@]}" -DCMAKE_BUILD_TYPE=Release -DHPCLAUNCH_BUILD_TESTS=OFF \
    -DHPCLAUNCH_PLOT=OFF -DOPENSSL_ROOT_DIR="$deps/usr" "${extra_cmake[@]}" \
    -DCMAKE_PREFIX_PATH="$(python3 -c 'import torch; print(torch.utils.cmake_prefix_path)')" &&
    cmake --build "$build" -j "$(nproc)" --target hpclaunch-train hpclaunch-probe
} >"$out/build.log" 2>&1 || rc=$?
train=$build/trainer/hpclaunch-train
if [ "$rc" = 0 ]; then
  $records add "$out" build hpclaunch-train build ok "$((SECONDS - build_start))" \
    --note "$("$train" --version 2>&1 | head -1 | tr '|' '/'); $("$build/trainer/hpclaunch-probe" --version 2>&1 | head -1 | tr '|' '/')"
else
  $records add "$out" build hpclaunch-train build failed "$((SECONDS - build_start))" \
    --note "exit $rc: $(grep -m1 -E 'error|Error' "$out/build.log" | tr '|' '/' | cut -c1-200)"
fi
grep -E '^-- hpclaunch-train' "$out/build.log" || true

# (2)-(6) gpu.sh, with what is left of the budget.
left=$((budget - (SECONDS - start)))
[ "$left" -gt 0 ] || left=1
rc=0
TRAIN=$train "$here/gpu.sh" --budget "$left" --out "$out" --results "$out/RESULTS-section.md" "$repeats" || rc=$?
echo "gpu-machine.sh: $((SECONDS - start)) s in all (budget $budget s); records in $out/results.md"
exit $rc
