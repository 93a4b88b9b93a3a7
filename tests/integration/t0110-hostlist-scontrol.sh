#!/usr/bin/env bash
# The native hostlist expansion (launcher/dialect/hostlist.cc) against the real `scontrol show hostnames` of
# Slurm 22.05: fixed patterns from the sites, malformed lists, and 300 generated ones. scontrol needs only a
# readable slurm.conf for this, not a running controller.
source "$(dirname "$0")/lib.sh"
need_cmd scontrol
expand=${HPCLAUNCH_HOSTLIST_EXPAND:-$HPCLAUNCH_BUILD_DIR/tests/hostlist_expand}
[ -x "$expand" ] || fail "test tool '$expand' not built; build the hostlist_expand target"

printf 'ClusterName=hostlist\nSlurmctldHost=localhost\nNodeName=q1\nPartitionName=p Nodes=q1\n' >"$test_tmp/slurm.conf"
export SLURM_CONF=$test_tmp/slurm.conf

compared=0
same_as_scontrol() {  # PATTERN: both expand it, to the same names in the same order
  local want got
  want=$(scontrol show hostnames "$1" 2>&1) || fail "scontrol failed on '$1': $want"
  case $want in *"Invalid hostlist"*) fail "scontrol refuses '$1' (the test's pattern is wrong): $want" ;; esac
  got=$("$expand" "$1" 2>&1) || fail "hpclaunch refuses '$1', scontrol expands it to: $(echo $want)
hpclaunch: $got"
  [ "$want" = "$got" ] || fail "'$1': scontrol gives [$(echo $want)], hpclaunch gives [$(echo $got)]"
  compared=$((compared + 1))
}
both_refuse() {  # PATTERN: scontrol says "Invalid hostlist" and hpclaunch gives an error naming the list
  local want got rc=0
  want=$(scontrol show hostnames "$1" 2>&1) || true
  assert_contains "$want" "Invalid hostlist" "scontrol on '$1'"
  got=$("$expand" "$1" 2>&1) || rc=$?
  [ $rc -eq 1 ] || fail "hpclaunch expands malformed '$1' (scontrol refuses it): $got"
  assert_contains "$got" "malformed hostlist '$1'" "hpclaunch's error for '$1'"
}
we_refuse() {  # PATTERN that scontrol guesses at (n[1-2 -> "n]"); hpclaunch refuses it
  local got rc=0
  got=$("$expand" "$1" 2>&1) || rc=$?
  [ $rc -eq 1 ] || fail "hpclaunch expands broken '$1' to: $got"
  assert_contains "$got" "malformed hostlist" "hpclaunch's error for '$1'"
}

for p in 'nid[001000-001003,001010]' 'a[1-2],b3' 'r[1-2]n[3-4]' 'n[08-10]' 'n[8-10]' 'n[008-10]' 'n[01-2]' \
  'n[1-02]' 'n[09-010]' 'n[8-010]' 'n[0010-12]' 'n[00-02]' 'n[1-3,05]' 'n[1-2,1-2]' 'x[1,1]' 'n[1-2][3-4]' \
  'host' 'a,,b' 'a b' ',a' 'a,' 'n[0]' 'nid0[1-3]' 'a[1-2]b[1-2]c[1-2]' 'a[1-3]b[1-2]c[1-2]' \
  'a[1-2]b[1-2]c[1-2]d[1-2]' 'x[1-2]y[5,7-8],z1' 'n[1-2],n[3-4]x[1-2]' 'n[9-11]a[1-2],z' 'jwb[0001-0004]' \
  'nid[004096-004099,004101]' 'gpu-[01-04]' 'cn[100-102],login1' 'n[1-65536]' 'r1i0n[0-3]'; do
  same_as_scontrol "$p"
done

for p in 'n[3-1]' 'n[]' 'n[a-b]' 'n[-2]' 'n[1--2]' 'n[1,]' 'n[,1]' 'n[1-2]-ib' 'n[[1]]' 'n[1-2]]' \
  'node-[1-2].domain' 'n[1:2]' 'n[1-70000]' 'a[1-2]b'; do
  both_refuse "$p"
done
for p in 'n[1-2' 'n1-2]' 'n[1-]' 'n[1 - 2]' 'n[1-2]x['; do we_refuse "$p"; done

# Generated: prefixes, 1-3 bracket groups of 1-3 ranges each, zero padding, a trailing single name.
RANDOM=4242
prefixes=(n nid gpu- r c x1-)
for i in $(seq 1 300); do
  p=${prefixes[RANDOM % ${#prefixes[@]}]}
  for g in $(seq 1 $((1 + RANDOM % 3))); do
    [ "$g" -gt 1 ] && p+=${prefixes[RANDOM % ${#prefixes[@]}]}
    width=$((1 + RANDOM % 4)); ranges=()
    for r in $(seq 1 $((1 + RANDOM % 3))); do
      lo=$((RANDOM % 30)); hi=$((lo + RANDOM % 4))
      if ((RANDOM % 2)); then ranges+=("$(printf '%0*d-%0*d' "$width" "$lo" "$width" "$hi")"); else ranges+=("$(printf '%0*d' "$width" "$lo")"); fi
    done
    p+="[$(IFS=,; echo "${ranges[*]}")]"
  done
  ((RANDOM % 3)) || p+=",login$((RANDOM % 9))"
  same_as_scontrol "$p"
done
note "$compared patterns expand exactly as scontrol does"
