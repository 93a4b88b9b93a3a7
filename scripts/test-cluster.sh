#!/usr/bin/env bash
# A real two-node Slurm cluster on loopback for the integration tests (see /work/shared/TEST-CLUSTER.md):
# one slurmctld and two slurmd (-N n1, -N n2), auth/none, no database, four fake GPUs per node. It has a site's
# shape: typed GRES (gpu:a100:4), node features (gpu, a100, nvme), partitions with time and node limits. No
# accounting: slurmdbd needs a MySQL/MariaDB server, more than a test fixture should start, so `sacctmgr`
# answers that accounting is off and `sites check` reports accounts and QOS as unknown.
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
# Needs root (slurmd runs jobs as their user; mknod; /etc/hosts; ip netns).
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
nodes=(n1 n2)
declare -A node_ip=([n1]=127.0.1.1 [n2]=127.0.1.2)
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
# in_ctld CMD...: run CMD where slurmctld runs (the hub namespace in netns mode); on_node NODE CMD...: on NODE.
in_ctld() { if [ $netns = 1 ]; then netns_exec "$pfx" hub "$@"; else "$@"; fi; }
on_node() { if [ $netns = 1 ]; then netns_exec "$pfx" "$@"; else shift; "$@"; fi; }

for tool in slurmctld slurmd sinfo scontrol squeue scancel; do
  command -v "$tool" >/dev/null || die "'$tool' not found; run scripts/install-deps.sh (Debian package slurm-wlm)"
done

pid_alive() { [ -n "${1:-}" ] && kill -0 "$1" 2>/dev/null; }
pid_of() { [ -s "$1" ] && cat "$1" || true; }
ctld_pidfile() { echo "$dir/slurmctld.pid"; }
slurmd_pidfile() { echo "$dir/slurmd-$1.pid"; }

# Processes of THIS directory's cluster, found by the conf path on their command line (never by name alone).
conf_re=$(printf '%s' "$conf" | sed 's/[][\.*^$+?(){}|]/\\&/g')
own_pids() { pgrep -f -- "-f $conf_re( |\$)" || true; }

port_busy() { ss -Hltn "( sport = :$1 )" 2>/dev/null | grep -q .; }

sinfo_here() { SLURM_CONF=$conf in_ctld sinfo "$@"; }

is_up() {
  [ -f "$conf" ] || return 1
  [ $netns = 0 ] || [ "$(netns_names "$pfx" | wc -l)" = 3 ] || return 1
  pid_alive "$(pid_of "$(ctld_pidfile)")" || return 1
  for n in "${nodes[@]}"; do pid_alive "$(pid_of "$(slurmd_pidfile "$n")")" || return 1; done
  sinfo_here -h >/dev/null 2>&1
}

all_idle() {
  local states
  states=$(sinfo_here -h -N -p debug -o '%N %t' 2>/dev/null | sort -u) || return 1
  [ "$states" = $'n1 idle\nn2 idle' ]
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
    return
  fi
  if [ -n "${TEST_CLUSTER_PORT_BASE:-}" ]; then
    ctld_port=$TEST_CLUSTER_PORT_BASE; node_port0=$((ctld_port + 1)); block=$(((ctld_port / 20) % 50))
    for p in $ctld_port $node_port0 $((node_port0 + 1)); do
      port_busy "$p" && die "port $p (TEST_CLUSTER_PORT_BASE=$TEST_CLUSTER_PORT_BASE) is in use; pick another base"
    done
    return
  fi
  local k
  for k in $(seq 0 19); do
    ctld_port=$((16817 + 20 * k)); node_port0=$((17001 + 20 * k)); block=$k
    port_busy "$ctld_port" || port_busy "$((ctld_port + 1))" || port_busy "$node_port0" \
      || port_busy "$((node_port0 + 1))" || return 0
  done
  die "no free port block from 16817/17001 upwards (20 tried); stop other test clusters (pgrep -a slurmctld)"
}

write_conf() {
  local shape="CPUs=64 Boards=1 SocketsPerBoard=1 CoresPerSocket=64 ThreadsPerCore=1 RealMemory=250000 Gres=gpu:a100:4 Features=gpu,a100,nvme State=UNKNOWN"
  local ctld_host=localhost ports node_lines
  ports="SlurmctldPort=$ctld_port
SlurmdPort=$((ctld_port + 1))"
  node_lines="NodeName=n[1-2] NodeHostname=localhost NodeAddr=127.0.0.1 Port=$node_port0-$((node_port0 + 1)) $shape"
  if [ $netns = 1 ]; then
    ctld_host="hub($(netns_addr hub))"
    ports="SlurmctldPort=$ctld_port
SlurmdPort=$node_port0"
    node_lines="NodeName=n1 NodeHostname=n1 NodeAddr=$(netns_addr n1) $shape
NodeName=n2 NodeHostname=n2 NodeAddr=$(netns_addr n2) $shape"
  fi
  mkdir -p "$dir/state" "$dir/log" "$dir/spool/n1" "$dir/spool/n2"
  for i in 0 1 2 3; do
    local dev=$dir/fakegpu$i
    if [ ! -c "$dev" ]; then
      rm -f "$dev"
      # Slurm refuses regular files as GPU devices; 1,3 is /dev/null's major/minor, harmless to open.
      mknod "$dev" c 1 3 || die "mknod $dev failed; the fake GPUs need root and a filesystem that allows device nodes"
    fi
  done
  cat >"$dir/gres.conf" <<EOF
NodeName=n[1-2] Name=gpu Type=a100 File=$dir/fakegpu[0-3]
EOF
  cat >"$conf" <<EOF
# Written by scripts/test-cluster.sh: two emulated nodes on loopback, no munge, no accounting database.
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
PartitionName=debug Nodes=n[1-2] Default=YES MaxTime=INFINITE State=UP OverSubscribe=YES
PartitionName=regular Nodes=n[1-2] MaxTime=INFINITE State=UP OverSubscribe=YES
PartitionName=booster Nodes=n[1-2] MaxTime=INFINITE State=UP OverSubscribe=YES
PartitionName=develbooster Nodes=n[1-2] MaxTime=INFINITE State=UP OverSubscribe=YES
PartitionName=gpu Nodes=n[1-2] MaxTime=INFINITE State=UP OverSubscribe=YES
PartitionName=gputest Nodes=n[1-2] MaxTime=INFINITE State=UP OverSubscribe=YES
# A site's shape for sites check and sites learn (t0260): limits a profile can get right or wrong.
PartitionName=shaped Nodes=n[1-2] MaxTime=04:00:00 MaxNodes=2 State=UP OverSubscribe=YES
PartitionName=single Nodes=n1 MaxTime=00:30:00 MaxNodes=1 State=UP OverSubscribe=YES
EOF
  cat >"$dir/env.sh" <<EOF
# Written by scripts/test-cluster.sh: source it to use the test cluster in $dir.
export SLURM_CONF=$conf
export HPCLAUNCH_CLUSTER_DIR=$dir
EOF
  [ $netns = 1 ] || return 0
  echo "export PATH=$dir/bin:\$PATH" >>"$dir/env.sh"
  mkdir -p "$dir/bin"
  local tool real
  for tool in "${slurm_tools[@]}"; do
    real=$(command -v "$tool") || continue
    cat >"$dir/bin/$tool" <<EOF
#!/bin/bash
# Written by scripts/test-cluster.sh (netns mode): $tool from the machine's namespace runs in the hub namespace.
if [ -z "\$(ip netns identify \$\$ 2>/dev/null)" ]; then
  source $netns_lib
  netns_exec $pfx hub $real "\$@"
  exit
fi
exec $real "\$@"
EOF
    chmod 755 "$dir/bin/$tool"
  done
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
  if [ $netns = 1 ]; then
    netns_down "$pfx" || die "cannot remove the namespaces of $dir ($pfx-*): see 'ip netns list'"
    rm -rf "${dir:?}/netns" "${dir:?}/bin"
  fi
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
  in_ctld slurmctld -c -f "$conf" 8>&- || die "slurmctld did not start; see $dir/log/slurmctld.log"
  for n in "${nodes[@]}"; do
    on_node "$n" slurmd -f "$conf" -N "$n" 8>&- || die "slurmd -N $n did not start; see $dir/log/slurmd-$n.log"
  done
  local i
  for i in $(seq 1 $((wait_s * 5))); do all_idle && break; sleep 0.2; done
  if ! all_idle; then
    local states
    states=$(sinfo_here -h -N -o '%N=%t' 2>&1 | tr '\n' ' ' || true)
    do_stop || true
    die "nodes n1, n2 not idle after ${wait_s}s (sinfo: ${states:-no answer}); see $dir/log/*.log"
  fi
  exec 8>&-
  if [ $netns = 1 ]; then
    note "up in $dir: namespaces $pfx-{hub,n1,n2}, slurmctld $(netns_addr hub):$ctld_port, slurmd n1 $(netns_addr n1):$node_port0, n2 $(netns_addr n2):$node_port0; source $dir/env.sh"
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
