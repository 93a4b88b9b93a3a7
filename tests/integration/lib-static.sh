# Sourced (after lib.sh) by t0720-static and t0725-static-aarch64: builds the static launcher
# (-DHPCLAUNCH_STATIC=ON, docs/install.md "The static binary") in a build directory of its own, and runs it in
# an otherwise empty root directory.

# static_build BUILD_DIR [CMAKE_ARG...]: configures and builds the static hpclaunch in BUILD_DIR (kept between runs: a
# rebuild is incremental), with ccache when installed, as scripts/test.sh and t0710 do. The build type and its flags are
# the main build's (HPCLAUNCH_BUILD_DIR's CMakeCache.txt; Release without one), so that every object but fmt's
# (cmake/StaticBuild.cmake) is compiled as the main build compiled it and comes from ccache: a fresh CI machine links
# the static binary instead of compiling the launcher a second time. -s: no symbols or debug information in the binary
# that is shipped (the wheel carries it).
static_build() {
  local build=$1
  shift
  local type=()
  use_ccache "$HPCLAUNCH_SOURCE_DIR"
  mapfile -t type < <(main_build_type)
  cmake -S "$HPCLAUNCH_SOURCE_DIR" -B "$build" "${type[@]}" -DCMAKE_EXE_LINKER_FLAGS=-s \
    -DHPCLAUNCH_STATIC=ON -DHPCLAUNCH_BUILD_TESTS=OFF "${ccache_launcher[@]}" "$@" >"$test_tmp/configure.log" 2>&1 ||
    fail "configure of the static build failed: $(tail -20 "$test_tmp/configure.log")"
  local t0=$SECONDS
  cmake --build "$build" -j "$(nproc)" --target hpclaunch >"$test_tmp/build.log" 2>&1 ||
    fail "the static build failed: $(grep -m5 -E 'error|undefined' "$test_tmp/build.log"; tail -5 "$test_tmp/build.log")"
  note "built $build/launcher/hpclaunch in $((SECONDS - t0)) s"
  prepared
}

# static_check_linkage BIN MACHINE: `file` names MACHINE and says statically linked; ldd finds nothing to load.
static_check_linkage() {
  local info
  info=$(file -L "$1")
  assert_contains "$info" "statically linked" "file $1"
  assert_contains "$info" "$2" "file $1"
  assert_contains "$info" "for GNU/Linux 3." "file $1 (the oldest kernel it runs on)"
  assert_contains "$(ldd "$1" 2>&1 || true)" "not a dynamic executable" "ldd $1"
}

# static_make_root DIR BIN: an otherwise empty root with BIN as /bin/hpclaunch, /bin/worker (a static C program,
# gcc -static, that prints the rendezvous variables it was given and exits 0 or WORKER_EXIT: the workers `exec`
# and the agent start), and the files the static hpclaunch reads, as docs/install.md lists them (found by taking
# each away until a command failed): /etc/hosts to resolve node names (glibc's built-in files lookup, no NSS
# module, no nsswitch.conf), /dev/null (the agent's workers' stdin), /tmp (the agent's temporary files).
static_make_root() {
  local root=$1
  [ "$(id -u)" -eq 0 ] || fail "needs root (chroot, mknod /dev/null), as CI runs it"
  mkdir -p "$root/bin" "$root/etc" "$root/tmp" "$root/dev"
  chmod 1777 "$root/tmp"
  mknod -m 666 "$root/dev/null" c 1 3 || fail "mknod $root/dev/null"
  cp "$2" "$root/bin/hpclaunch"
  printf '127.0.0.1 localhost\n10.11.12.13 static-node1\n127.0.0.1 %s\n' "$(hostname)" >"$root/etc/hosts"
  cat >"$test_tmp/worker.c" <<'EOF'
#include <stdio.h>
#include <stdlib.h>
static const char* v(const char* k) { const char* s = getenv(k); return s ? s : "-"; }
int main(int argc, char** argv) {
  printf("worker RANK=%s LOCAL_RANK=%s WORLD_SIZE=%s MASTER_ADDR=%s MASTER_PORT=%s ARG=%s\n", v("RANK"),
         v("LOCAL_RANK"), v("WORLD_SIZE"), v("MASTER_ADDR"), v("MASTER_PORT"), argc > 1 ? argv[1] : "-");
  return getenv("WORKER_EXIT") ? atoi(getenv("WORKER_EXIT")) : 0;
}
EOF
  gcc -static -O2 -o "$root/bin/worker" "$test_tmp/worker.c" || fail "gcc -static could not build the worker"
}

# in_root DIR [VAR=VALUE...] CMD...: runs CMD with DIR as its root directory (chroot) and an environment of
# HOME=/tmp, PATH=/bin and the VARs alone.
in_root() {
  local root=$1 vars=()
  shift
  while [[ $1 == *=* ]]; do
    vars+=("$1")
    shift
  done
  env -i HOME=/tmp PATH=/bin "${vars[@]}" "$(command -v chroot)" "$root" "$@"
}

# static_commands ROOT [EMULATOR...]: sites, render (a Slurm and a PBS site), env (a Slurm task's variables,
# MASTER_ADDR resolved through /etc/hosts), exec and a one-node agent with two workers, each run in ROOT by
# /bin/hpclaunch (under EMULATOR, a path inside ROOT, when given). Outputs checked, not only exit codes.
static_commands() {
  local root=$1
  shift
  local hl=("$@" /bin/hpclaunch)
  local out
  out=$(in_root "$root" "${hl[@]}" --version) || fail "--version in the root"
  assert_contains "$out" "hpclaunch 0." "--version"
  out=$(in_root "$root" "${hl[@]}" sites 2>&1) || fail "sites in the root: $out"
  grep -Eq '^perlmutter +slurm ' <<<"$out" || fail "sites has no perlmutter row: $out"
  grep -Eq '^polaris +pbs ' <<<"$out" || fail "sites has no polaris row: $out"
  out=$(in_root "$root" "${hl[@]}" render --site perlmutter --nodes 2 --account m1234_g -- python train.py 2>&1) ||
    fail "render (Slurm) in the root: $out"
  assert_contains "$out" "#SBATCH --nodes=2" "render perlmutter"
  assert_contains "$out" "#SBATCH --account=m1234_g" "render perlmutter"
  out=$(in_root "$root" "${hl[@]}" render --site polaris --nodes 2 --account proj1 -- python train.py 2>&1) ||
    fail "render (PBS) in the root: $out"
  assert_contains "$out" "select=2:ncpus=64:ngpus=4" "render polaris"
  assert_contains "$out" "#PBS -A proj1" "render polaris"
  # A Slurm task's variables (rank 5 of 8 on 2 nodes); MASTER_ADDR is the first node, which must resolve (glibc
  # reads the root's /etc/hosts: no NSS module is loaded); a node it does not name is refused.
  local task=(SLURM_JOB_ID=5 SLURM_STEP_ID=0 SLURM_NODELIST='static-node[1-2]' SLURM_STEP_NODELIST='static-node[1-2]'
    SLURM_PROCID=5 SLURM_NTASKS=8 SLURM_STEP_NUM_TASKS=8 SLURM_LOCALID=1 SLURM_NNODES=2 SLURM_JOB_NUM_NODES=2
    SLURM_STEP_NUM_NODES=2 SLURM_NODEID=1 SLURM_TASKS_PER_NODE='4(x2)' SLURM_STEP_TASKS_PER_NODE='4(x2)')
  out=$(in_root "$root" "${task[@]}" "${hl[@]}" env 2>&1) || fail "env in the root: $out"
  assert_contains "$out" "export RANK=5" "env"
  assert_contains "$out" "export LOCAL_RANK=1" "env"
  assert_contains "$out" "export WORLD_SIZE=8" "env"
  assert_contains "$out" "export MASTER_ADDR=static-node1" "env"
  assert_contains "$out" "export MASTER_PORT=20005" "env (the job id's port)"
  if out=$(in_root "$root" "${task[@]/static-node/other-node}" "${hl[@]}" env 2>&1); then
    fail "env in the root accepted a first node that /etc/hosts does not name: $out"
  fi
  assert_contains "$out" "'other-node1' (the first-node rule's host) does not resolve" "env, unknown node"
  out=$(in_root "$root" "${task[@]}" "${hl[@]}" exec -- /bin/worker exec 2>&1) || fail "exec in the root: $out"
  assert_eq "worker RANK=5 LOCAL_RANK=1 WORLD_SIZE=8 MASTER_ADDR=static-node1 MASTER_PORT=20005 ARG=exec" "$out" "exec"
  # The agent: its own store on a free port, two workers, each exiting 0.
  out=$(in_root "$root" "${hl[@]}" agent --standalone --nproc-per-node 2 --no-python -- /bin/worker agent 2>&1) ||
    fail "agent in the root: $out"
  local workers
  workers=$(grep -o 'worker RANK=.*' <<<"$out" | sed -E 's/MASTER_PORT=[0-9]+/MASTER_PORT=P/' | sort)
  assert_eq "worker RANK=0 LOCAL_RANK=0 WORLD_SIZE=2 MASTER_ADDR=127.0.0.1 MASTER_PORT=P ARG=agent
worker RANK=1 LOCAL_RANK=1 WORLD_SIZE=2 MASTER_ADDR=127.0.0.1 MASTER_PORT=P ARG=agent" "$workers" "the agent's workers"
  # A worker's failure is the agent's: exit code non-zero.
  if out=$(in_root "$root" WORKER_EXIT=3 "${hl[@]}" agent --standalone --nproc-per-node 1 --no-python -- /bin/worker 2>&1); then
    fail "agent in the root exited 0 though its worker exited 3: $out"
  fi
  # Nothing else was there to be used (a loader, libc.so, an NSS module), nor was anything left behind.
  local expected=(bin bin/hpclaunch bin/worker dev dev/null etc etc/hosts tmp "${@#/}")
  assert_eq "$(printf '%s\n' "${expected[@]}" | sort)" "$(cd "$root" && find . -mindepth 1 | sed 's|^\./||' | sort)" "files in the root"
}
