#!/usr/bin/env bash
# t0425: every combination of --redirects / --tee / --local-ranks-filter sends each worker line where torchrun 2.x
# sends it (issue 27 §3: `--redirects 3 --tee 3` wrote the files and printed nothing; torchrun tees, as tee is
# "redirect, then tail the file to the console"). The peer is the real torchrun of LibTorch 2.6 in the Debian 13
# root (as t0515 runs it; Debian 12's 1.13 has no --local-ranks-filter and crashes on --redirects 0). That torch is
# built without libuv and its c10d rendezvous store asks for libuv whatever the environment says, so torchrun runs
# through a four-line wrapper that makes TCPStore's use_libuv False; the logs code is torchrun's own. For each
# combination both run two workers that write one tagged line to stdout and one to stderr; the places each tag
# reached (our stdout, our stderr, a rank's stdout.log / stderr.log) must be the same. --log-dir is always given:
# without --redirects/--tee our agent then tees both (docs/agent.md), so every combination below names one.
source "$(dirname "$0")/lib.sh"
need_hpclaunch
need_cmd chroot unshare mount
[ "$(id -u)" -eq 0 ] || fail "needs root (a mount namespace, chroot), as CI runs it"
source "$(dirname "$0")/lib-root.sh"
need_debian13_root
root=$debian13_root
cd "$test_tmp"

combos='--redirects 3 --tee 3
--redirects 3
--tee 3
--redirects 1 --tee 2
--redirects 2 --tee 3
--redirects 0:3,1:1 --tee 1:2
--redirects 3 --tee 3 --local-ranks-filter 0
--tee 1 --local-ranks-filter 1
--redirects 2 --tee 0:1 --local-ranks-filter 0'

# The same in both places: the worker, and one sorted line per place a tag reached.
common='
worker() {  # DIR: writes DIR/w.sh
  printf "%s\n" "#!/bin/sh" "echo tag-out-\$LOCAL_RANK" "echo tag-err-\$LOCAL_RANK >&2" >"$1/w.sh"
  chmod +x "$1/w.sh"
}
places() {  # OUT ERR LOGDIR
  { grep -o "tag-[a-z]*-[0-9]" "$1" | sed "s/^/console-stdout /"
    grep -o "tag-[a-z]*-[0-9]" "$2" | sed "s/^/console-stderr /"
    find "$3" -name "std*.log" | while read -r f; do
      grep -o "tag-[a-z]*-[0-9]" "$f" | sed "s/^/file-$(basename "$f" .log) /"
    done
  } | sort | tr "\n" ";"
}
'
port=$(free_port)
inside="set -u
$common"'
d=$(mktemp -d /tmp/t0425.XXXXXX)
worker "$d"
cat >"$d/torchrun.py" <<PY
import sys
import torch.distributed as dist
class TCPStore(dist.TCPStore):
    def __init__(self, *args, **kwargs):
        kwargs["use_libuv"] = False  # this LibTorch has no libuv
        super().__init__(*args, **kwargs)
dist.TCPStore = TCPStore
from torch.distributed.run import main
sys.exit(main())
PY
i=0
while read -r flags; do
  i=$((i + 1))
  timeout 120 python3 "$d/torchrun.py" --nnodes 1 --rdzv-endpoint 127.0.0.1:'"$port"' --rdzv-conf is_host=1 \
    --local-addr 127.0.0.1 --nproc-per-node 2 $flags --log-dir "$d/logs$i" --no-python "$d/w.sh" \
    >"$d/out$i" 2>"$d/err$i" || { tail -20 "$d/err$i"; echo "FAIL: torchrun $flags"; exit 1; }
  echo "$flags => $(places "$d/out$i" "$d/err$i" "$d/logs$i")"
done <<<"$COMBOS"
rm -rf "$d"
'
# The mounts live and die with the namespace: nothing stays mounted after the test, whatever happens.
want=$(unshare --mount --propagation private bash -c '
  root=$1 inside=$2 combos=$3
  mount -t proc proc "$root/proc"
  chroot "$root" env -i PATH=/usr/bin:/bin HOME=/root TMPDIR=/tmp COMBOS="$combos" bash -c "$inside"
' _ "$root" "$inside" "$combos" 2>&1) || fail "torchrun 2.6 in the Debian 13 root: $want"
assert_contains "$want" "--redirects 3 --tee 3 => console-stderr tag-err-0;console-stderr tag-err-1;console-stdout" \
  "torchrun 2.6 prints what it tees (the reference itself)"

eval "$common"
worker "$test_tmp"
got=$(i=0
  while read -r flags; do
    i=$((i + 1))
    # shellcheck disable=SC2086
    timeout 120 "$HPCLAUNCH" agent --standalone --nproc-per-node 2 $flags --log-dir "$test_tmp/logs$i" --no-python \
      "$test_tmp/w.sh" >"out$i" 2>"err$i" || { cat "err$i"; echo "FAIL: hpclaunch agent $flags"; exit 1; }
    echo "$flags => $(places "out$i" "err$i" "logs$i")"
  done <<<"$combos") || fail "$got"
assert_eq "$want" "$got" "where each worker line went, torchrun 2.6 (first) and hpclaunch agent"
echo ok
