#!/usr/bin/env bash
# The peers' venv: torch 2.15 (its torchrun, its LibTorch and CUDA 13 libraries, its gloo), submitit and Lightning
# from PyPI, pinned in python/requirements-peers.txt, in a venv of Debian's python3 (python3-venv). Made once per
# machine (a stamp holds the requirements' hash; a changed pin makes it anew), by scripts/install-deps.sh.
#
#   scripts/peers-venv.sh [DIR]     default: ${HPCLAUNCH_ROOTS:-/opt/hpclaunch}/peers-venv
# The tests find it through tests/integration/lib.sh's peer_python (HPCLAUNCH_PEER_VENV, the same default).
set -euo pipefail
root=$(cd "$(dirname "$0")/.." && pwd)
venv=${1:-${HPCLAUNCH_PEER_VENV:-${HPCLAUNCH_ROOTS:-/opt/hpclaunch}/peers-venv}}
req=$root/python/requirements-peers.txt
want=$(sha256sum "$req" | cut -d' ' -f1)
if [ "$(cat "$venv/.hpclaunch-peers" 2>/dev/null || true)" = "$want" ]; then
  exit 0
fi
rm -rf "$venv.new"
mkdir -p "$(dirname "$venv")"
/usr/bin/python3 -m venv "$venv.new"
# --no-cache-dir: 4 GiB of wheels would otherwise stay in root's pip cache beside the venv.
"$venv.new/bin/pip" install -q --no-cache-dir --disable-pip-version-check -r "$req"
echo "$want" >"$venv.new/.hpclaunch-peers"
rm -rf "$venv"
mv "$venv.new" "$venv"
# A venv's scripts name its folder: made as DIR.new, they must name DIR.
grep -rlI --null "$venv.new" "$venv/bin" | xargs -0 -r sed -i "s#$venv.new#$venv#g"
echo "peers-venv.sh: $("$venv/bin/python" -c 'import torch, submitit, lightning; print("torch", torch.__version__, "submitit", submitit.__version__, "lightning", lightning.__version__)') in $venv"
