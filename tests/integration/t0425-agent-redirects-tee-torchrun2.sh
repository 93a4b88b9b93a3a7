#!/usr/bin/env bash
# t0425: every combination of --redirects / --tee / --local-ranks-filter sends each worker line where torchrun 2.15
# (the peers' venv) sends it (`--redirects 3 --tee 3` once wrote the files and printed nothing; torchrun tees, as
# tee is "redirect, then tail the file to the console"). For each combination both run two workers that write one
# tagged line to stdout and one to stderr; the places each tag reached (our stdout, our stderr, a rank's
# stdout.log / stderr.log) must be the same. --log-dir is always given: without --redirects/--tee our agent then
# tees both (docs/agent.md), so every combination below names one.
source "$(dirname "$0")/lib.sh"
need_hpclaunch
py=$(peer_python)
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

worker() {  # DIR: writes DIR/w.sh
  printf "%s\n" "#!/bin/sh" "echo tag-out-\$LOCAL_RANK" "echo tag-err-\$LOCAL_RANK >&2" >"$1/w.sh"
  chmod +x "$1/w.sh"
}
places() {  # OUT ERR LOGDIR: one sorted line per place a tag reached
  { grep -o "tag-[a-z]*-[0-9]" "$1" | sed "s/^/console-stdout /"
    grep -o "tag-[a-z]*-[0-9]" "$2" | sed "s/^/console-stderr /"
    find "$3" -name "std*.log" | while read -r f; do
      grep -o "tag-[a-z]*-[0-9]" "$f" | sed "s/^/file-$(basename "$f" .log) /"
    done
  } | sort | tr "\n" ";"
}
worker "$test_tmp"
want=$(i=0
  while read -r flags; do
    i=$((i + 1))
    # shellcheck disable=SC2086
    env -i PATH=/usr/bin:/bin HOME="$test_tmp" timeout 120 $py -m torch.distributed.run --standalone --nproc-per-node 2 \
      $flags --log-dir "$test_tmp/ref$i" --no-python "$test_tmp/w.sh" >"refout$i" 2>"referr$i" ||
      { tail -20 "referr$i"; echo "FAIL: torchrun $flags"; exit 1; }
    echo "$flags => $(places "refout$i" "referr$i" "ref$i")"
  done <<<"$combos") || fail "torchrun 2.15: $want"
assert_contains "$want" "--redirects 3 --tee 3 => console-stderr tag-err-0;console-stderr tag-err-1;console-stdout" \
  "torchrun 2.15 prints what it tees (the reference itself)"

got=$(i=0
  while read -r flags; do
    i=$((i + 1))
    # shellcheck disable=SC2086
    timeout 120 "$HPCLAUNCH" agent --standalone --nproc-per-node 2 $flags --log-dir "$test_tmp/logs$i" --no-python \
      "$test_tmp/w.sh" >"out$i" 2>"err$i" || { cat "err$i"; echo "FAIL: hpclaunch agent $flags"; exit 1; }
    echo "$flags => $(places "out$i" "err$i" "logs$i")"
  done <<<"$combos") || fail "$got"
assert_eq "$want" "$got" "where each worker line went, torchrun 2.15 (first) and hpclaunch agent"
echo ok
