# Sourced by the mpirun tests after lib.sh: a clean environment (no scheduler variables from the caller), the
# root flag Open MPI wants, and the stand-in for ssh.
need_cmd mpirun
# Tests run as root here; Open MPI refuses that without these.
export OMPI_ALLOW_RUN_AS_ROOT=1 OMPI_ALLOW_RUN_AS_ROOT_CONFIRM=1
# Open MPI 4.1's rtc/hwloc shares the topology through a shared-memory segment mapped at a guessed address; an
# orted started on this same machine (the ssh stand-in below) crashed there once in CI (SIGSEGV in
# hwloc_shmem_topology_write). rtc/hwloc only serves process binding, which these tests turn off (-bind-to none).
export OMPI_MCA_rtc=^hwloc
for v in $(env | grep -oE '^(SLURM|PBS|PMI|PALS|OMPI_COMM|HPCLAUNCH_LOCAL|HPCLAUNCH_MASTER|HPCLAUNCH_GPU)[A-Z_]*' || true); do
  unset "$v"
done
unset MASTER_ADDR MASTER_PORT CUDA_VISIBLE_DEVICES

# mpirun reaches other hosts with ssh; there is no sshd for the emulated nodes n1, n2 here, so this stand-in
# (the one fake in these tests) runs orted on this machine. Everything after it is real Open MPI.
make_fake_ssh() {
  cat >"$test_tmp/fake-ssh" <<'SSH'
#!/bin/sh
while [ $# -gt 0 ]; do case $1 in -*) shift ;; *) break ;; esac; done
FAKE_SSH_HOST=$1 && export FAKE_SSH_HOST  # for the orted wrapper below
shift
exec sh -c "$*"
SSH
  chmod +x "$test_tmp/fake-ssh"
  echo "$test_tmp/fake-ssh"
}

# The emulated nodes are one host here (the same hostname and /tmp), so their orteds would share one session
# directory (ORTE_TMPDIR_BASE/ompi.HOST.UID/jf.N/...) and race to make it: "A call to mkdir was unable to create the
# desired directory ... File exists" (CI: t0130, t0150, twice in one day). On a cluster every node has its own; here
# each orted, whether srun or the ssh stand-in starts it, runs through this wrapper (orte_launch_agent), which moves
# the orte_tmpdir_base mpirun gives it into a folder of its node's own.
cat >"$test_tmp/orted-per-node" <<'ORTED'
#!/usr/bin/env bash
node=${SLURMD_NODENAME:-${FAKE_SSH_HOST:-local}}
args=()
while [ $# -gt 0 ]; do
  if [ "$1" = orte_tmpdir_base ] && [ $# -gt 1 ]; then
    dir=${2//\"/}/$node
    mkdir -p "$dir"
    args+=("$1" "$dir")
    shift 2
    continue
  fi
  args+=("$1")
  shift
done
exec orted "${args[@]}"
ORTED
chmod +x "$test_tmp/orted-per-node"
export OMPI_MCA_orte_launch_agent=$test_tmp/orted-per-node

# What a PBS Pro job's batch script sees (observed on OpenPBS 23.06, /work/shared/TEST-CLUSTER.md); there is
# no PBS server packaged for Debian, so the test sets it. NODEFILE_LINES: one host a line, one line per MPI slot.
pbs_job_env() {  # JOBID NODEFILE_LINES...
  local id=$1
  shift
  printf '%s\n' "$@" >"$test_tmp/pbs_nodefile"
  export PBS_JOBID=$id PBS_JOBNAME=hpclaunch-test PBS_NODEFILE=$test_tmp/pbs_nodefile PBS_NODENUM=0 PBS_TASKNUM=1
  export PBS_O_WORKDIR=$test_tmp PBS_O_HOST=$(hostname) PBS_QUEUE=gpu PBS_ENVIRONMENT=PBS_BATCH NCPUS=8
  export OMP_NUM_THREADS=8
}
