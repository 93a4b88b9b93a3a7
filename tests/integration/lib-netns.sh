# shellcheck shell=bash
# Emulated hosts in network namespaces, sourced by scripts/test-cluster.sh (TEST_CLUSTER_NETNS=1) and by the network
# fault tests (t048x). Each node NAME runs in namespace PFX-NAME with its own address on its own link (a veth pair: eth0
# inside, PFX-NAME's end on a bridge in namespace PFX-hub), its own host name (a UTS namespace per command, `hostname
# NAME`) and its own /etc/hosts (/etc/netns/PFX-NAME/hosts, bound over /etc/hosts in a mount namespace of the command's,
# as `ip netns exec` does). Nothing is added to the machine's own namespace: no address, route, link or /etc/hosts line;
# every link and route lives in the namespaces, removed with them by netns_down.
#
# Addresses: 198.18.77.0/24 (in RFC 2544's 198.18.0.0/15, reserved for benchmarking, never routed), node i at
# 198.18.77.i, the hub at 198.18.77.254; netns_up refuses them if the machine's own namespace has an address or a
# route there (NETNS_SUBNET=A.B.C picks another /24). Every cluster of namespaces is its own network, so two
# (two build directories, two tests) may use the same addresses and ports at once.
#
#   netns_up PFX NAME...        make the hub and one namespace per NAME (node i = i-th NAME), links up
#   netns_down PFX              kill what runs in PFX's namespaces, remove them (their links and routes go with
#                               them) and their /etc/netns files
#   netns_exec PFX NAME CMD...  run CMD in NAME's network namespace under host name NAME (NAME=hub: the hub)
#   netns_addr NAME...          (after netns_up) the address of NAME
#   netns_link PFX NAME up|down bring NAME's link up or down from inside its namespace (a cable pulled)
#
# Needs root (ip netns). Names: PFX at most 8 characters (interface names are at most 15).

netns_subnet=${NETNS_SUBNET:-198.18.77}
declare -gA netns_addrs=()

netns_die() { echo "lib-netns: error: $*" >&2; return 1; }

netns_addr() { echo "${netns_addrs[$1]:?lib-netns: no node $1 (netns_up first)}"; }

netns_names() {  # PFX: the namespaces of PFX that exist now
  ip netns list 2>/dev/null | awk -v p="$1-" 'index($1, p) == 1 { print $1 }'
}

netns_hosts_file() {  # PFX NAME...: the /etc/hosts every namespace of PFX sees
  local pfx=$1 i=0 n
  shift
  echo "127.0.0.1 localhost"
  echo "$netns_subnet.254 hub"
  for n in "$@"; do
    i=$((i + 1))
    echo "$netns_subnet.$i $n"
  done
}

netns_up() {  # PFX NAME...
  local pfx=$1 i=0 n ns
  shift
  [ ${#pfx} -le 8 ] || netns_die "namespace prefix '$pfx' is longer than 8 characters" || return 1
  [ -z "$(netns_names "$pfx")" ] || netns_down "$pfx"
  # The machine's own network must not be in the range: the names would then mean two things.
  if ip -4 -o addr show | grep -q " inet $netns_subnet\." ||
     ip -4 route show | grep -v '^default' | grep -q "^$netns_subnet\."; then
    netns_die "the machine's own network uses $netns_subnet.0/24; set NETNS_SUBNET to another A.B.C" || return 1
  fi
  netns_addrs=([hub]=$netns_subnet.254)
  ip netns add "$pfx-hub" || netns_die "ip netns add $pfx-hub failed (needs root)" || return 1
  ip -n "$pfx-hub" link set lo up
  ip -n "$pfx-hub" link add br0 type bridge
  ip -n "$pfx-hub" addr add "$netns_subnet.254/24" dev br0
  ip -n "$pfx-hub" link set br0 up
  mkdir -p "/etc/netns/$pfx-hub"
  netns_hosts_file "$pfx" "$@" >"/etc/netns/$pfx-hub/hosts"
  for n in "$@"; do
    i=$((i + 1))
    ns=$pfx-$n
    netns_addrs[$n]=$netns_subnet.$i
    ip netns add "$ns" || netns_die "ip netns add $ns failed" || return 1
    ip -n "$ns" link set lo up
    # Made in the machine's namespace under names of PFX's own, moved into the namespaces at once.
    ip link add "${pfx}a$i" type veth peer name "${pfx}b$i" || netns_die "ip link add veth ${pfx}a$i failed" || return 1
    ip link set "${pfx}a$i" netns "$ns"
    ip link set "${pfx}b$i" netns "$pfx-hub"
    ip -n "$ns" link set "${pfx}a$i" name eth0
    ip -n "$ns" addr add "$netns_subnet.$i/24" dev eth0
    ip -n "$ns" link set eth0 up
    ip -n "$pfx-hub" link set "${pfx}b$i" name "$n"
    ip -n "$pfx-hub" link set "$n" master br0 up
    mkdir -p "/etc/netns/$ns"
    netns_hosts_file "$pfx" "$@" >"/etc/netns/$ns/hosts"
  done
}

netns_down() {  # PFX: idempotent; what still runs in PFX's namespaces (a failed test's processes) is killed
  local pfx=$1 ns p
  for ns in $(netns_names "$pfx"); do
    for p in $(ip netns pids "$ns" 2>/dev/null); do kill -KILL "$p" 2>/dev/null || true; done
    ip netns del "$ns" 2>/dev/null || true
  done
  rm -rf /etc/netns/"$pfx"-*
  rmdir /etc/netns 2>/dev/null || true  # made by netns_up; kept while another PFX's files are in it
  local link  # a veth left in the machine's namespace by an interrupted netns_up
  for link in $(ip -o link show 2>/dev/null | awk -F': ' -v p="$pfx" '{ sub(/@.*/, "", $2) } index($2, p) == 1 { print $2 }'); do
    ip link del "$link" 2>/dev/null || true
  done
  [ -z "$(netns_names "$pfx")" ] || netns_die "namespaces of $pfx left: $(netns_names "$pfx" | tr '\n' ' ')"
}

# Not `ip netns exec`: it mounts a new /sys, without the cgroup hierarchies slurmd needs. nsenter enters the
# network namespace only; unshare gives the command a UTS namespace (its host name) and a private mount namespace
# in which the node's hosts file is bound over /etc/hosts.
netns_exec() {  # PFX NAME CMD...
  local pfx=$1 name=$2
  shift 2
  nsenter --net="/run/netns/$pfx-$name" unshare --uts --mount --propagation private \
    sh -c 'mount --bind "$1" /etc/hosts && hostname "$0" && shift && exec "$@"' "$name" "/etc/netns/$pfx-$name/hosts" "$@"
}

netns_link() {  # PFX NAME up|down
  ip -n "$1-$2" link set eth0 "$3"
}
