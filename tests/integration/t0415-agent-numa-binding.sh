#!/usr/bin/env bash
# --numa-binding on this machine's real topology (hwloc): with `node`, each of 2 workers is bound to exactly the
# CPUs of a NUMA node as the kernel lists them (/sys/devices/system/node/nodeN/cpulist); with `exclusive`, the
# workers' CPU sets are disjoint and each inside one NUMA node. Without the flag, workers keep the agent's CPUs.
source "$(dirname "$0")/lib.sh"
need_hpclaunch
cd "$test_tmp"
ncpu=$(nproc)
[ "$ncpu" -ge 2 ] || skip "one CPU: nothing to share out"
expand() {  # a cpulist "0-3,8" -> "0 1 2 3 8"
  local out=() part
  IFS=, read -ra parts <<<"$1"
  for part in "${parts[@]}"; do
    if [[ $part == *-* ]]; then out+=($(seq "${part%-*}" "${part#*-}")); else out+=("$part"); fi
  done
  echo "${out[*]}"
}
nodes=()
for f in /sys/devices/system/node/node*/cpulist; do nodes+=("$(expand "$(cat "$f")")"); done
run() {  # BINDING: prints "RANK CPUS..." per worker
  "$HPCLAUNCH" agent --standalone --nproc-per-node 2 ${1:+--numa-binding "$1"} --no-python \
    bash -c 'echo "cpus $LOCAL_RANK $(grep Cpus_allowed_list /proc/self/status | cut -f2)"' 2>"$test_tmp/err" \
    | grep -o 'cpus [0-9] .*' | sort | while read -r _ rank list; do echo "$rank $(expand "$list")"; done
}
in_a_node() {  # "CPUS" -> the node whose cpulist contains all of them, or fail
  local cpu n
  for n in "${nodes[@]}"; do
    local all=1
    for cpu in $1; do [[ " $n " == *" $cpu "* ]] || all=0; done
    [ $all = 1 ] && { echo "$n"; return 0; }
  done
  return 1
}

out=$(run node)
[ "$(echo "$out" | wc -l)" = 2 ] || fail "node: expected 2 workers: $out $(cat "$test_tmp/err")"
while read -r rank cpus; do
  node=$(in_a_node "$cpus") || fail "node: worker $rank's CPUs '$cpus' are in no one NUMA node (${nodes[*]})"
  assert_eq "$node" "$cpus" "node: worker $rank is bound to its whole NUMA node"
done <<<"$out"

out=$(run exclusive)
[ "$(echo "$out" | wc -l)" = 2 ] || fail "exclusive: expected 2 workers: $out $(cat "$test_tmp/err")"
a=$(echo "$out" | sed -n 1p | cut -d' ' -f2-)
b=$(echo "$out" | sed -n 2p | cut -d' ' -f2-)
in_a_node "$a" >/dev/null || fail "exclusive: worker 0's CPUs '$a' span NUMA nodes"
in_a_node "$b" >/dev/null || fail "exclusive: worker 1's CPUs '$b' span NUMA nodes"
for cpu in $a; do [[ " $b " == *" $cpu "* ]] && fail "exclusive: CPU $cpu given to both workers ($a | $b)"; done

out=$(run "")
assert_eq "$(expand "$(grep Cpus_allowed_list /proc/self/status | cut -f2)")" "$(echo "$out" | sed -n 1p | cut -d' ' -f2-)" \
  "without --numa-binding a worker keeps the agent's CPUs"
echo ok
