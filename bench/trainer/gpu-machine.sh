#!/usr/bin/env bash
# The one prepared script for a lent GPU machine (issue 35; ../shared/GPU-DEVICE.md has what such a machine has:
# a CUDA PyTorch as `python3`, CMake, g++, nvcc, and none of the launcher's libraries, and nothing can be fetched
# there). Two halves:
#   bench/trainer/gpu-machine.sh --fetch     here: the launcher's libraries as Debian packages (apt-get download,
#                                            18 MB) into build-gpu-deps/ (ignored by git; `run` carries it)
#   bench/trainer/gpu-machine.sh [REPEATS]   there: unpacks them under /tmp/deps (never into /), builds, checks
#                                            that --cuda-graphs trains to eager's loss (bf16 tolerance) on the
#                                            auto-encoder and ResNet-18, then runs bench/trainer/gpu.sh; logs and
#                                            the RESULTS.md section go to $OUT (default build-gpu-out), a short
#                                            table last. CONFIGS as gpu.sh's.
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
repeats=${1:-1}
out=${OUT:-$root/build-gpu-out}
mkdir -p "$out"
[ -n "$(find "$debs" -name '*.deb' 2>/dev/null)" ] ||
  { echo "gpu-machine.sh: no packages in $debs: run bench/trainer/gpu-machine.sh --fetch first (and carry it)" >&2; exit 1; }
deps=/tmp/deps
mkdir -p "$deps"
for f in "$debs"/*.deb; do dpkg -x "$f" "$deps"; done
ln -sf /usr/lib/x86_64-linux-gnu/libz.so.1 "$deps/usr/lib/x86_64-linux-gnu/libz.so"  # Debian's link dangles there
export PATH=$PATH:$deps/usr/bin CMAKE_PREFIX_PATH=$deps/usr PKG_CONFIG_SYSROOT_DIR=$deps \
  PKG_CONFIG_PATH=$deps/usr/lib/x86_64-linux-gnu/pkgconfig:$deps/usr/share/pkgconfig \
  LD_LIBRARY_PATH=$deps/usr/lib/x86_64-linux-gnu${LD_LIBRARY_PATH:+:$LD_LIBRARY_PATH}
export BUILD_DIR=/tmp/hpclaunch-gpu-build RESULTS=$out/RESULTS-section.md
export CMAKE_ARGS="-DHPCLAUNCH_PLOT=OFF -DOPENSSL_ROOT_DIR=$deps/usr"
generator=()
command -v ninja >/dev/null && generator=(-G Ninja)
# shellcheck disable=SC2086  # CMAKE_ARGS is words
cmake -S "$root" -B "$BUILD_DIR" "${generator[@]}" -DCMAKE_BUILD_TYPE=Release -DHPCLAUNCH_BUILD_TESTS=OFF $CMAKE_ARGS \
  -DCMAKE_PREFIX_PATH="$(python3 -c 'import torch; print(torch.utils.cmake_prefix_path)')" >"$out/configure.log" 2>&1 ||
  { tail -30 "$out/configure.log"; exit 1; }
grep "hpclaunch-train" "$out/configure.log"
cmake --build "$BUILD_DIR" -j "$(nproc)" --target hpclaunch-train hpclaunch-probe >"$out/build.log" 2>&1 ||
  { grep -B2 -A12 "error" "$out/build.log" | head -60; exit 1; }
train=$BUILD_DIR/trainer/hpclaunch-train
"$train" --version | tee "$out/version.txt"
"$BUILD_DIR/trainer/hpclaunch-probe" --version | tee -a "$out/version.txt"

# --cuda-graphs against eager: the same seed and data, the last step's loss (bf16 autocast: 2% apart at most).
graphs_check() {  # NAME FLAGS...
  local name=$1 variant
  shift
  for variant in eager graphs; do
    local extra=()
    [ "$variant" = graphs ] && extra=(--cuda-graphs)
    WORLD_SIZE=1 RANK=0 MASTER_ADDR=127.0.0.1 MASTER_PORT=29511 timeout 300 "$train" "$@" "${extra[@]}" --device cuda \
      --backend nccl --amp --no-validation --metrics "$out/check-$name-$variant.jsonl" >"$out/check-$name-$variant.log" 2>&1 ||
      { tail -20 "$out/check-$name-$variant.log"; echo "gpu-machine.sh: $name $variant failed"; return 1; }
  done
  python3 - "$out/check-$name-eager.jsonl" "$out/check-$name-graphs.jsonl" "$name" <<'PY'
import json, sys
last = [[json.loads(l) for l in open(p) if '"type":"step"' in l][-1]["loss"] for p in sys.argv[1:3]]
ok = abs(last[1] - last[0]) <= 0.02 * abs(last[0])
print(f"graphs check {sys.argv[3]}: eager loss {last[0]:.5f}, --cuda-graphs {last[1]:.5f}: {'ok' if ok else 'DIFFERENT'}")
sys.exit(0 if ok else 1)
PY
}
status=0
graphs_check autoencoder --model autoencoder --synthetic --synthetic-samples 20000 --batch-size 128 --steps 300 |
  tee -a "$out/checks.txt" || status=1
graphs_check resnet18-b32 --model resnet --resnet-depth 18 --image-size 224 --num-classes 1000 --synthetic \
  --synthetic-samples 20000 --batch-size 32 --channels-last --steps 60 | tee -a "$out/checks.txt" || status=1
"$here/gpu.sh" "$repeats" 2>&1 | tee "$out/gpu-sh.log"
exit $status
