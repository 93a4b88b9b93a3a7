#!/usr/bin/env bash
# A real two-node Slurm cluster on loopback for the integration tests (see /work/shared/TEST-CLUSTER.md):
# one slurmctld and two slurmd (-N n1, -N n2), auth/none, no database, four fake GPUs per node. It has a site's
# shape: typed GRES (gpu:a100:4), node features (gpu, a100, nvme), partitions with time and node limits. No
# accounting unless TEST_CLUSTER_ACCOUNTING=1 (below: a MariaDB server and a slurmdbd, for t0642 alone): without it
# `sacctmgr` answers that accounting is off and `sites check` reports accounts and QOS as unknown.
#
#   scripts/test-cluster.sh start  DIR   start it (idempotent), wait until both nodes are idle, write DIR/env.sh
#   scripts/test-cluster.sh stop   DIR   cancel its jobs, stop its daemons, check none is left (idempotent)
#   scripts/test-cluster.sh status DIR   exit 0 and print `sinfo` if it is up, exit 1 if not
#   scripts/test-cluster.sh restart-ctld DIR [SECONDS]
#                                        stop slurmctld (SIGTERM: it saves its state), leave it down SECONDS
#                                        (default 0), start it again recovering its state (no -c), wait until
#                                        it answers; jobs and slurmd keep running meanwhile
#
# `source DIR/env.sh` points sbatch/srun/sinfo/scontrol at it (SLURM_CONF). Ports: slurmctld 16817, slurmd
# 17001-17002 by default; if another cluster (another DIR) holds them, the next free block of 20 ports is used,
# so two build directories can run their suites side by side. TEST_CLUSTER_PORT_BASE=N forces slurmctld's port
# (slurmd then use N+1, N+2). TEST_CLUSTER_WAIT=seconds bounds the wait for idle nodes (default 60).
#
# TEST_CLUSTER_NETNS=1 at `start`: nodes on separate hosts. Each slurmd runs in its own network namespace with its
# own address (n1 198.18.77.1, n2 198.18.77.2, NodeAddr), its own host name (a UTS namespace) and its own
# /etc/hosts, linked by veth pairs to a bridge in a hub namespace where slurmctld runs (198.18.77.254); see
# tests/integration/lib-netns.sh. Nothing is added to the machine's own namespace or /etc/hosts, and the ports are
# the namespaces' own (6817, 6818), so this cluster coexists with loopback ones. DIR/env.sh then also puts DIR/bin
# first on PATH: sbatch, srun, squeue, ... that run the real command in the hub namespace when called from the
# machine's namespace, and as they are inside a node. The mode is kept in DIR/netns until `stop` removes the
# namespaces; stop, status and restart-ctld follow it.
#
# TEST_CLUSTER_SLURM=24.11 at `start`: Debian 13's Slurm 24.11 instead of the machine's own (22.05 on Debian 12),
# from the root scripts/slurm-root.sh makes (TEST_CLUSTER_SLURM_ROOT, default /opt/hpclaunch/roots/slurm-24.11;
# docs/slurm-versions.md). DIR/in-root runs a command chrooted into that root, in a mount namespace of its own
# with the machine's /proc, /dev, /sys, /tmp, /work, /opt, /root, /home, /etc/hosts and DIR, so no mount
# outlives it; the daemons' namespaces also hold the machine's whole file system at ROOT/host, where the root's
# SPANK plugin hostroot.so (DIR/plugstack.conf) takes every task of a job just before it starts: jobs run the
# machine's binaries on the machine's libraries, while slurmd and slurmstepd run on the root's. DIR/env.sh puts
# DIR/bin first on PATH: sbatch, srun, squeue, ... that run the root's command through DIR/in-root. The cluster
# has TopologyPlugin=topology/block (DIR/topology.conf: blocks of two nodes). Kept in DIR/slurm-root until
# `stop`. With TEST_CLUSTER_NETNS=1 as well, each daemon runs in the root inside its namespace (the hub's, a
# node's), and DIR/bin's commands go to the hub namespace and into the root; its jobs have ids from 51000, apart
# from the machine's netns cluster's.
# TEST_CLUSTER_NODES=N at `start` (2 to 8, default 2; not with TEST_CLUSTER_NETNS): nodes n1..nN (slurmd ports
# N+1..), every partition but `single` on all of them; kept in DIR/nodes.
# TEST_CLUSTER_ACCOUNTING=1 at `start` (not with TEST_CLUSTER_NETNS or TEST_CLUSTER_SLURM): with accounting, as
# sites have it: a MariaDB server and a slurmdbd of the cluster's own (DIR/mariadb, DIR/slurmdbd.conf; the port
# block's slurmctld port + 2 and + 3), jobacct_gather/linux, and sacctmgr's cluster, account `hpclaunch` and user
# root; so sacct answers. Kept in DIR/accounting until `stop` ends both daemons and removes the database
# (scripts/lib-test-cluster-accounting.sh).
# Needs root (slurmd runs jobs as their user; mknod; /etc/hosts; ip netns; unshare and chroot).
set -euo pipefail

prog=test-cluster
die() { echo "$prog: error: $*" >&2; exit 1; }
note() { echo "$prog: $*" >&2; }

[ $# -eq 2 ] || { [ $# -eq 3 ] && [ "$1" = restart-ctld ]; } \
  || die "usage: scripts/test-cluster.sh start|stop|status DIR, or restart-ctld DIR [SECONDS]"
action=$1
mkdir -p "$2"
dir=$(cd "$2" && pwd)
conf=$dir/slurm.conf
# Node count: from DIR/nodes when a cluster with other than two nodes exists there, else TEST_CLUSTER_NODES (start).
nnodes=2
if [ -f "$dir/nodes" ]; then
  nnodes=$(cat "$dir/nodes")
elif [ "$action" = start ]; then
  nnodes=${TEST_CLUSTER_NODES:-2}
fi
[[ $nnodes =~ ^[2-8]$ ]] || die "TEST_CLUSTER_NODES=$nnodes: give 2 to 8 nodes"
nodes=()
declare -A node_ip=()
for ((i = 1; i <= nnodes; i++)); do nodes+=("n$i"); node_ip[n$i]=127.0.1.$i; done
node_range=n[1-$nnodes]
wait_s=${TEST_CLUSTER_WAIT:-60}
slurm_tools=(sbatch srun salloc squeue scancel scontrol sinfo sacct sacctmgr sattach sstat)

# Netns mode: from DIR/netns when a cluster of that mode exists there, else from TEST_CLUSTER_NETNS (start).
netns=0
if [ -f "$dir/netns" ] || { [ "$action" = start ] && [ "${TEST_CLUSTER_NETNS:-0}" = 1 ]; }; then
  netns=1
  netns_lib=$(cd "$(dirname "${BASH_SOURCE[0]}")/.." && pwd)/tests/integration/lib-netns.sh
  # shellcheck source=tests/integration/lib-netns.sh
  source "$netns_lib"
  pfx=hl$(printf '%s' "$dir" | md5sum | cut -c1-6)  # this DIR's namespaces: PFX-hub, PFX-n1, PFX-n2
fi
[ $netns = 0 ] || [ "$nnodes" = 2 ] || die "the netns cluster has two nodes; unset TEST_CLUSTER_NODES"

# Slurm root (another Slurm version): from DIR/slurm-root when such a cluster exists there, else
# TEST_CLUSTER_SLURM (start). Empty: the machine's own Slurm.
slurm_root=
slurm_version=host
if [ -f "$dir/slurm-root" ]; then
  read -r slurm_version slurm_root <"$dir/slurm-root"
elif [ "$action" = start ]; then
  case ${TEST_CLUSTER_SLURM:-host} in
    host) ;;
    24.11)
      slurm_version=24.11
      slurm_root=${TEST_CLUSTER_SLURM_ROOT:-${HPCLAUNCH_ROOTS:-/opt/hpclaunch}/roots/slurm-24.11}
      ;;
    *) die "TEST_CLUSTER_SLURM=$TEST_CLUSTER_SLURM: use 24.11 (scripts/slurm-root.sh's root), or host (the default)" ;;
  esac
fi
if [ -n "$slurm_root" ]; then
  if [ ! -f "$slurm_root/etc/hpclaunch-slurm-root" ] || [ ! -f "$slurm_root/usr/local/lib/hpclaunch/hostroot.so" ]; then
    die "no Slurm $slurm_version root in $slurm_root; run scripts/slurm-root.sh $slurm_root"
  fi
fi
# Accounting (slurmdbd and its MariaDB; scripts/lib-test-cluster-accounting.sh): from DIR/accounting when such a
# cluster exists there, else TEST_CLUSTER_ACCOUNTING=1 (start).
accounting=0
if [ -f "$dir/accounting" ] || { [ "$action" = start ] && [ "${TEST_CLUSTER_ACCOUNTING:-0}" = 1 ]; }; then
  accounting=1
  # shellcheck source=scripts/lib-test-cluster-accounting.sh
  source "$(dirname "${BASH_SOURCE[0]}")/lib-test-cluster-accounting.sh"
  if [ $netns = 1 ] || [ -n "$slurm_root" ]; then
    die "TEST_CLUSTER_ACCOUNTING=1 is for a loopback cluster of the machine's Slurm; unset TEST_CLUSTER_NETNS and TEST_CLUSTER_SLURM"
  fi
fi
# in_ctld CMD...: run CMD where slurmctld runs (the hub namespace in netns mode; in the Slurm root, in either
# mode); on_node NODE CMD...: on NODE.
in_root=()
[ -z "$slurm_root" ] || in_root=("$dir/in-root" --host)
in_ctld() { on_node hub "$@"; }
on_node() {
  local node=$1
  shift
  if [ $netns = 1 ]; then netns_exec "$pfx" "$node" "${in_root[@]}" "$@"
  else "${in_root[@]}" "$@"; fi
}

if [ -z "$slurm_root" ]; then
  for tool in slurmctld slurmd sinfo scontrol squeue scancel; do
    command -v "$tool" >/dev/null || die "'$tool' not found; run scripts/install-deps.sh (Debian package slurm-wlm)"
  done
fi

pid_alive() { [ -n "${1:-}" ] && kill -0 "$1" 2>/dev/null; }
pid_of() { [ -s "$1" ] && cat "$1" || true; }
ctld_pidfile() { echo "$dir/slurmctld.pid"; }
slurmd_pidfile() { echo "$dir/slurmd-$1.pid"; }

# Processes of THIS directory's cluster, found by the conf path on their command line (never by name alone).
conf_re=$(printf '%s' "$conf" | sed 's/[][\.*^$+?(){}|]/\\&/g')
own_pids() { pgrep -f -- "-f $conf_re( |\$)" || true; }

port_busy() { ss -Hltn "( sport = :$1 )" 2>/dev/null | grep -q .; }
ports_busy() { local p; for p in $(seq "$1" $(($1 + $2 - 1))); do port_busy "$p" && return 0; done; return 1; }

sinfo_here() { SLURM_CONF=$conf in_ctld sinfo "$@"; }

is_up() {
  [ -f "$conf" ] || return 1
  [ $netns = 0 ] || [ "$(netns_names "$pfx" | wc -l)" = 3 ] || return 1
  pid_alive "$(pid_of "$(ctld_pidfile)")" || return 1
  for n in "${nodes[@]}"; do pid_alive "$(pid_of "$(slurmd_pidfile "$n")")" || return 1; done
  [ $accounting = 0 ] || pid_alive "$(pid_of "$(acct_dbd_pidfile)")" || return 1
  sinfo_here -h >/dev/null 2>&1
}

all_idle() {
  local states
  states=$(sinfo_here -h -N -p debug -o '%N %t' 2>/dev/null | sort -u) || return 1
  [ "$states" = "$(printf '%s idle\n' "${nodes[@]}")" ]
}

ensure_hosts() {
  for n in "${nodes[@]}"; do
    if ! grep -Eq "^[[:space:]]*[0-9.]+[[:space:]]+(.*[[:space:]])?$n([[:space:]]|\$)" /etc/hosts; then
      echo "${node_ip[$n]} $n" >>/etc/hosts || die "cannot add '$n' to /etc/hosts; run as root or add '${node_ip[$n]} $n' by hand"
      note "added '${node_ip[$n]} $n' to /etc/hosts"
    fi
  done
}

pick_ports() {
  if [ $netns = 1 ]; then  # the namespaces' own ports: free whatever runs on the machine
    ctld_port=6817; node_port0=6818; block=0
    # Job ids of its own for Slurm 24.11's (51000 on: above every block's below) beside the machine's netns
    # cluster: tests find a job's processes by its SLURM_JOB_ID.
    [ -z "$slurm_root" ] || block=50
    return
  fi
  if [ -n "${TEST_CLUSTER_PORT_BASE:-}" ]; then
    ctld_port=$TEST_CLUSTER_PORT_BASE; node_port0=$((ctld_port + 1)); block=$(((ctld_port / 20) % 50))
    for p in $ctld_port $(seq "$node_port0" $((node_port0 + nnodes - 1))) $([ $accounting = 0 ] || acct_ports); do
      port_busy "$p" && die "port $p (TEST_CLUSTER_PORT_BASE=$TEST_CLUSTER_PORT_BASE) is in use; pick another base"
    done
    return 0  # not the loop's status: the last port's `port_busy` (1, free) ended start silently
  fi
  local k
  for k in $(seq 0 19); do
    ctld_port=$((16817 + 20 * k)); node_port0=$((17001 + 20 * k)); block=$k
    port_busy "$ctld_port" || port_busy "$((ctld_port + 1))" || ports_busy "$node_port0" "$nnodes" \
      || { [ $accounting = 1 ] && ports_busy "$((ctld_port + 2))" 2; } || return 0
  done
  die "no free port block from 16817/17001 upwards (20 tried); stop other test clusters (pgrep -a slurmctld)"
}

write_conf() {
  local shape="CPUs=64 Boards=1 SocketsPerBoard=1 CoresPerSocket=64 ThreadsPerCore=1 RealMemory=250000 Gres=gpu:a100:4 Features=gpu,a100,nvme State=UNKNOWN"
  local ctld_host=localhost ports node_lines count_word=two
  [ "$nnodes" = 2 ] || count_word=$nnodes
  ports="SlurmctldPort=$ctld_port
SlurmdPort=$((ctld_port + 1))"
  node_lines="NodeName=$node_range NodeHostname=localhost NodeAddr=127.0.0.1 Port=$node_port0-$((node_port0 + nnodes - 1)) $shape"
  if [ $netns = 1 ]; then
    ctld_host="hub($(netns_addr hub))"
    ports="SlurmctldPort=$ctld_port
SlurmdPort=$node_port0"
    node_lines="NodeName=n1 NodeHostname=n1 NodeAddr=$(netns_addr n1) $shape
NodeName=n2 NodeHostname=n2 NodeAddr=$(netns_addr n2) $shape"
  fi
  mkdir -p "$dir/state" "$dir/log"
  for n in "${nodes[@]}"; do mkdir -p "$dir/spool/$n"; done
  for i in 0 1 2 3; do
    local dev=$dir/fakegpu$i
    if [ ! -c "$dev" ]; then
      rm -f "$dev"
      # Slurm refuses regular files as GPU devices; 1,3 is /dev/null's major/minor, harmless to open.
      mknod "$dev" c 1 3 || die "mknod $dev failed; the fake GPUs need root and a filesystem that allows device nodes"
    fi
  done
  cat >"$dir/gres.conf" <<EOF
NodeName=$node_range Name=gpu Type=a100 File=$dir/fakegpu[0-3]
EOF
  cat >"$conf" <<EOF
# Written by scripts/test-cluster.sh: $count_word emulated nodes on loopback, no munge, no accounting database.
ClusterName=test
SlurmctldHost=$ctld_host
SlurmUser=root
SlurmdUser=root
AuthType=auth/none
CredType=cred/none
# A requeued job waits cred_expire seconds before it may start again (default 120): keep requeue tests short.
AuthInfo=cred_expire=5
$ports
StateSaveLocation=$dir/state
SlurmdSpoolDir=$dir/spool/%n
SlurmctldPidFile=$dir/slurmctld.pid
SlurmdPidFile=$dir/slurmd-%n.pid
SlurmctldLogFile=$dir/log/slurmctld.log
SlurmdLogFile=$dir/log/slurmd-%n.log
ProctrackType=proctrack/linuxproc
TaskPlugin=task/none
MpiDefault=none
SchedulerType=sched/backfill
# The main scheduler over the whole queue every second (default 60 s). A pending job is otherwise started only
# by an event (a submit, a job's end) at most every batch_sched_delay (3 s), or by backfill, which skips its
# 30 s cycle when no job or node changed: a requeued job, eligible only after its begin time (cred_expire + 1 s),
# waited for the next 60 s pass (slurmctld.log: 'Requeuing' then 'sched: Allocate' up to 60 s later), and the
# jobs of a queue two at a time started 3 s apart. Two nodes: a pass costs nothing.
SchedulerParameters=sched_interval=1
SelectType=select/cons_tres
SelectTypeParameters=CR_Core
# As most sites: a job over a partition's limits is refused at submission instead of pending forever.
EnforcePartLimits=ALL
ReturnToService=2
GresTypes=gpu
SlurmdParameters=config_overrides
InactiveLimit=0
KillWait=5
MinJobAge=30
# Job ids (and so the MASTER_PORTs derived from them) differ between clusters running side by side.
FirstJobId=$((1000 * (block + 1)))
$node_lines
# debug is the default; the others carry real sites' partition names (Perlmutter selects with -q, not -p).
PartitionName=debug Nodes=$node_range Default=YES MaxTime=INFINITE State=UP OverSubscribe=YES
PartitionName=regular Nodes=$node_range MaxTime=INFINITE State=UP OverSubscribe=YES
PartitionName=booster Nodes=$node_range MaxTime=INFINITE State=UP OverSubscribe=YES
PartitionName=develbooster Nodes=$node_range MaxTime=INFINITE State=UP OverSubscribe=YES
PartitionName=gpu Nodes=$node_range MaxTime=INFINITE State=UP OverSubscribe=YES
PartitionName=gputest Nodes=$node_range MaxTime=INFINITE State=UP OverSubscribe=YES
# A site's shape for sites check and sites learn (t0260): limits a profile can get right or wrong.
PartitionName=shaped Nodes=$node_range MaxTime=04:00:00 MaxNodes=2 State=UP OverSubscribe=YES
PartitionName=single Nodes=n1 MaxTime=00:30:00 MaxNodes=1 State=UP OverSubscribe=YES
EOF
  cat >"$dir/env.sh" <<EOF
# Written by scripts/test-cluster.sh: source it to use the test cluster in $dir.
export SLURM_CONF=$conf
export HPCLAUNCH_CLUSTER_DIR=$dir
EOF
  [ -z "$slurm_root" ] || write_root_conf
  [ $netns = 1 ] || [ -n "$slurm_root" ] || return 0
  write_wrappers
}

# DIR/bin, first on PATH in DIR/env.sh: sbatch, srun, squeue, ... that reach this cluster from anywhere. The Slurm
# root's run through DIR/in-root; in netns mode, called from the machine's own namespace, they run in the hub's.
write_wrappers() {
  echo "export PATH=$dir/bin:\$PATH" >>"$dir/env.sh"
  mkdir -p "$dir/bin"
  local tool real what
  for tool in "${slurm_tools[@]}"; do
    if [ -n "$slurm_root" ]; then
      [ -x "$slurm_root/usr/bin/$tool" ] || continue
      real="$dir/in-root /usr/bin/$tool" what="the Slurm $slurm_version root's $tool ($slurm_root)"
    else
      real=$(command -v "$tool") || continue
      what=$tool
    fi
    {
      echo '#!/bin/bash'
      if [ $netns = 1 ]; then
        # In the Slurm root (a command of this script's in_ctld, whose PATH has DIR/bin) it is in a namespace
        # already, and the root has no `ip` to say so.
        cat <<EOF
# Written by scripts/test-cluster.sh (netns mode): $what; from the machine's namespace it runs in the hub namespace.
if [ ! -e /etc/hpclaunch-slurm-root ] && [ -z "\$(ip netns identify \$\$ 2>/dev/null)" ]; then
  source $netns_lib
  netns_exec $pfx hub $real "\$@"
  exit
fi
EOF
      else
        echo "# Written by scripts/test-cluster.sh: $what."
      fi
      echo "exec $real \"\$@\""
    } >"$dir/bin/$tool"
    chmod 755 "$dir/bin/$tool"
  done
}

# The Slurm root's part of the configuration (TEST_CLUSTER_SLURM): what its version takes that the machine's does
# not, the block topology, the plugin that runs jobs on the machine's file system, and DIR/in-root.
write_root_conf() {
  local b blocks=""
  for ((b = 1; b <= nnodes / 2; b++)); do blocks+="BlockName=b$b Nodes=n[$((2 * b - 1))-$((2 * b))]"$'\n'; done
  ((nnodes % 2 == 0)) || blocks+="BlockName=b$b Nodes=n$nnodes"$'\n'
  printf '# Written by scripts/test-cluster.sh: blocks of two nodes (topology/block: not in Slurm 22.05).\n%s' \
    "$blocks" >"$dir/topology.conf"
  echo "required /usr/local/lib/hpclaunch/hostroot.so /host" >"$dir/plugstack.conf"
  cat >>"$conf" <<EOF
# Slurm $slurm_version from $slurm_root (TEST_CLUSTER_SLURM): jobs leave the root for the machine's files (in-root).
PlugStackConfig=$dir/plugstack.conf
TopologyPlugin=topology/block
EOF
  local d binds=""
  for d in /tmp /work /opt /root /home; do [ -d "$d" ] && binds+=" $d"; done
  case $dir in /tmp/* | /work/* | /opt/* | /root/* | /home/*) ;; *) binds+=" $dir" ;; esac
  # shellcheck disable=SC2086
  for d in /host $binds; do mkdir -p "$slurm_root$d"; done
  [ -e "$slurm_root/etc/hosts" ] || touch "$slurm_root/etc/hosts"  # a mount point for the machine's
  cat >"$dir/in-root" <<EOF
#!/bin/bash
# Written by scripts/test-cluster.sh: in-root [--host] CMD... runs CMD chrooted into the Slurm $slurm_version root
# $slurm_root, in the caller's folder, in a mount namespace of its own (no mount outlives CMD's processes).
# --host (the daemons): also the machine's whole file system at /host, for hostroot.so (plugstack.conf).
set -e
if [ -e /etc/hpclaunch-slurm-root ]; then  # already in the root (a wrapper called from a root's command)
  [ "\${1:-}" != --host ] || shift
  exec "\$@"
fi
if [ "\${1:-}" != --in-namespace ]; then exec unshare -m --propagation private -- "\$0" --in-namespace "\$@"; fi
shift
r=$slurm_root
# First: the binds below stay out of the machine's tree at /host. There, the machine's own Slurm commands are
# this cluster's wrappers: a job that puts /usr/bin first on PATH still meets Slurm $slurm_version, as on a site.
if [ "\$1" = --host ]; then
  mount --rbind / "\$r/host"
  for t in $dir/bin/*; do
    [ ! -f "\$r/host/usr/bin/\${t##*/}" ] || mount --bind "\$t" "\$r/host/usr/bin/\${t##*/}"
  done
  shift
fi
for d in /proc /dev /sys$binds; do mount --rbind "\$d" "\$r\$d"; done
mount --bind /etc/hosts "\$r/etc/hosts"
# The machine's libraries are not the root's: a caller's LD_LIBRARY_PATH (LD_PRELOAD) would load them into
# Slurm. Kept aside under another name, which hostroot.so turns back into LD_LIBRARY_PATH in the job's tasks.
for v in LD_LIBRARY_PATH LD_PRELOAD; do
  if [ -n "\${!v+set}" ]; then export "HPCLAUNCH_HOST_\$v=\${!v}"; unset "\$v"; fi
done
exec chroot "\$r" /bin/sh -c 'cd "\$1" 2>/dev/null || cd /; shift; exec "\$@"' in-root "\$PWD" "\$@"
EOF
  chmod 755 "$dir/in-root"
}

kill_pid() {  # pid: TERM, wait up to 10 s, then KILL
  local pid=$1 i
  pid_alive "$pid" || return 0
  kill -TERM "$pid" 2>/dev/null || true
  for i in $(seq 1 100); do pid_alive "$pid" || return 0; sleep 0.1; done
  kill -KILL "$pid" 2>/dev/null || true
  sleep 0.2
}

do_stop() {
  if [ -f "$conf" ] && pid_alive "$(pid_of "$(ctld_pidfile)")"; then
    local jobs i
    jobs=$(SLURM_CONF=$conf in_ctld squeue -h -o %i 2>/dev/null || true)
    if [ -n "$jobs" ]; then
      # shellcheck disable=SC2086
      SLURM_CONF=$conf in_ctld scancel $jobs 2>/dev/null || true
      for i in $(seq 1 50); do
        [ -z "$(SLURM_CONF=$conf in_ctld squeue -h -o %i 2>/dev/null || true)" ] && break
        sleep 0.2
      done
    fi
  fi
  for n in "${nodes[@]}"; do kill_pid "$(pid_of "$(slurmd_pidfile "$n")")"; done
  kill_pid "$(pid_of "$(ctld_pidfile)")"
  # Daemons whose pid file was lost (a crashed start): still only this DIR's, found by their conf path.
  local p
  for p in $(own_pids); do kill_pid "$p"; done
  rm -f "$(ctld_pidfile)" "$dir"/slurmd-*.pid
  local left
  left=$(own_pids)
  [ -z "$left" ] || die "daemons of $dir still running after stop: pids $left"
  [ $accounting = 0 ] || acct_down
  if [ $netns = 1 ]; then
    netns_down "$pfx" || die "cannot remove the namespaces of $dir ($pfx-*): see 'ip netns list'"
    rm -rf "${dir:?}/netns" "${dir:?}/bin"
  fi
  rm -f "$dir/nodes"
  [ -z "$slurm_root" ] || rm -rf "${dir:?}/slurm-root" "${dir:?}/in-root" "${dir:?}/bin"
}

do_start() {
  if is_up; then
    local i
    for i in $(seq 1 $((wait_s * 5))); do all_idle && break; sleep 0.2; done
    all_idle || die "cluster in $dir is up but its nodes are not idle: $(sinfo_here -h -N -o '%N=%t' | tr '\n' ' '); stop and start it again"
    note "already running in $dir (SLURM_CONF=$conf)"
    return 0
  fi
  do_stop  # half-started or stale: clean slate
  # Before the daemons: a failed start is still stopped as a cluster of this root and these nodes.
  [ -z "$slurm_root" ] || echo "$slurm_version $slurm_root" >"$dir/slurm-root"
  [ "$nnodes" = 2 ] || echo "$nnodes" >"$dir/nodes"
  if [ $netns = 1 ]; then
    touch "$dir/netns"  # before the namespaces: a failed start is still stopped as a netns cluster
    netns_up "$pfx" "${nodes[@]}" || { do_stop || true; die "cannot make the namespaces of the netns cluster"; }
  else
    ensure_hosts
  fi
  # The ports are picked and taken under one lock for the whole machine, held until the nodes are up: two
  # clusters started at once (CTest starts tests/CMakeLists.txt's two together) picked the same free block, and
  # the second's sinfo was answered by the first's slurmctld.
  exec 8>"${TMPDIR:-/tmp}/hpclaunch-test-cluster-ports.lock"
  flock -w 120 8 || die "another test-cluster.sh start holds ${TMPDIR:-/tmp}/hpclaunch-test-cluster-ports.lock for over 120 s"
  pick_ports
  write_conf
  if [ $accounting = 1 ]; then
    touch "$dir/accounting"  # before the daemons: a failed start is still stopped with its database
    acct_conf_lines >>"$conf"
    acct_up
  fi
  in_ctld slurmctld -c -f "$conf" 8>&- || die "slurmctld did not start; see $dir/log/slurmctld.log"
  for n in "${nodes[@]}"; do
    on_node "$n" slurmd -f "$conf" -N "$n" 8>&- || die "slurmd -N $n did not start; see $dir/log/slurmd-$n.log"
  done
  local i
  for i in $(seq 1 $((wait_s * 5))); do all_idle && break; sleep 0.2; done
  if ! all_idle; then
    local states names
    states=$(sinfo_here -h -N -o '%N=%t' 2>&1 | tr '\n' ' ' || true)
    do_stop || true
    names=$(printf '%s, ' "${nodes[@]}")
    die "nodes ${names%, } not idle after ${wait_s}s (sinfo: ${states:-no answer}); see $dir/log/*.log"
  fi
  exec 8>&-
  local version=""
  [ -z "$slurm_root" ] || version=" Slurm $(sinfo_here --version | cut -d' ' -f2) ($slurm_version),"
  if [ $netns = 1 ]; then
    note "up in $dir:$version namespaces $pfx-{hub,n1,n2}, slurmctld $(netns_addr hub):$ctld_port, slurmd n1 $(netns_addr n1):$node_port0, n2 $(netns_addr n2):$node_port0; source $dir/env.sh"
    return
  fi
  if [ -n "$slurm_root" ] || [ "$nnodes" != 2 ]; then
    note "up in $dir:${version:- Slurm $(sinfo_here --version | cut -d' ' -f2),} slurmctld :$ctld_port, slurmd $node_range :$node_port0-$((node_port0 + nnodes - 1)); source $dir/env.sh"
    return
  fi
  note "up in $dir: slurmctld :$ctld_port, slurmd n1 :$node_port0, n2 :$((node_port0 + 1)); source $dir/env.sh"
}

do_restart_ctld() {
  is_up || die "cluster in $dir is not running; start it first"
  kill_pid "$(pid_of "$(ctld_pidfile)")"
  sleep "${1:-0}"
  in_ctld slurmctld -f "$conf" || die "slurmctld did not start again; see $dir/log/slurmctld.log"
  local i
  for i in $(seq 1 $((wait_s * 5))); do sinfo_here -h >/dev/null 2>&1 && break; sleep 0.2; done
  sinfo_here -h >/dev/null 2>&1 || die "slurmctld does not answer ${wait_s}s after its restart; see $dir/log/slurmctld.log"
  note "slurmctld restarted in $dir (state recovered)"
}

do_status() {
  if is_up; then
    sinfo_here
    return 0
  fi
  echo "$prog: not running in $dir" >&2
  return 1
}

# One action at a time per DIR (CTest may start the fixture while a developer stops it by hand).
exec 9>"$dir/.lock"
flock -w 120 9 || die "another test-cluster.sh holds $dir/.lock for over 120 s"

case $action in
  start) do_start ;;
  stop) do_stop ;;
  status) do_status ;;
  restart-ctld) do_restart_ctld "${3:-0}" ;;
  *) die "unknown action '$action'; use start, stop, status or restart-ctld" ;;
esac
