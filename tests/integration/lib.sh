# Sourced by every tests/integration/tNNNN-NAME.sh: assertions, a per-test temporary directory removed on exit,
# and access to the test cluster. A script exits 0 on success, 1 on failure, 77 when skipped (CTest's
# SKIP_RETURN_CODE); it reports one line per failure, naming the test and what differed, and one line `SKIP NAME:
# reason` when skipped (scripts/test.sh lists them; tests/skips-allowed.txt says which may skip where).
set -euo pipefail

test_name=$(basename "$0" .sh)
: "${HPCLAUNCH_SOURCE_DIR:=$(cd "$(dirname "${BASH_SOURCE[0]}")/../.." && pwd)}"
: "${HPCLAUNCH_BUILD_DIR:=$HPCLAUNCH_SOURCE_DIR/build}"
: "${HPCLAUNCH:=$HPCLAUNCH_BUILD_DIR/launcher/hpclaunch}"
# The Slurm test cluster: the one CTest gave this test (id:test_cluster_b,...: BUILD/test-cluster-b; the resource
# groups of tests/CMakeLists.txt), else HPCLAUNCH_CLUSTER_DIR, else BUILD/test-cluster.
if [[ ${CTEST_RESOURCE_GROUP_0_SLURM:-} =~ ^id:([a-z_0-9]+), ]]; then
  HPCLAUNCH_CLUSTER_DIR=$HPCLAUNCH_BUILD_DIR/${BASH_REMATCH[1]//_/-}
fi
: "${HPCLAUNCH_CLUSTER_DIR:=$HPCLAUNCH_BUILD_DIR/test-cluster}"
export HPCLAUNCH HPCLAUNCH_SOURCE_DIR HPCLAUNCH_BUILD_DIR HPCLAUNCH_CLUSTER_DIR
source "$HPCLAUNCH_SOURCE_DIR/tests/integration/lib-port.sh"
source "$HPCLAUNCH_SOURCE_DIR/tests/integration/lib-wait.sh"  # wait_until
source "$HPCLAUNCH_SOURCE_DIR/scripts/lib-build.sh"  # use_ccache, configure_fuzz_build
# A folder a test configures (t0710's, README's install line in it, the static and wheel builds) takes the main
# build's generator (Ninja from scripts/test.sh: use_ninja), so its compile lines are the main build's and its
# objects come from ccache. CMake reads CMAKE_GENERATOR only for a folder not configured yet.
main_generator=$(sed -n 's/^CMAKE_GENERATOR:INTERNAL=//p' "$HPCLAUNCH_BUILD_DIR/CMakeCache.txt" 2>/dev/null || true)
[ -z "$main_generator" ] || export CMAKE_GENERATOR=$main_generator

# The test's own directory: under /tmp so that every emulated node (and every job) sees it. Kept when
# HPCLAUNCH_KEEP_TMP=1, to look at after a failure.
test_tmp=$(mktemp -d "/tmp/hpclaunch-$test_name.XXXXXX")
chmod 755 "$test_tmp"
# Tests never touch the user's own state: the job index and user site profiles of every hpclaunch a test runs
# (and every job it submits: sbatch passes the environment on) live in the test's directory (t0236 checks it).
export XDG_STATE_HOME=$test_tmp/xdg-state XDG_CONFIG_HOME=$test_tmp/xdg-config
# Open MPI's session directories (/tmp/ompi.HOST.UID/jf.N/...) for this test alone: mpiruns of tests running side
# by side shared one, and one's clean-up removed it while another's orted was creating its own in it (CI:
# "A call to mkdir was unable to create the desired directory"). Short, for the Unix sockets made under it.
ompi_tmp=$(mktemp -d /tmp/om.XXXXXX)
chmod 755 "$ompi_tmp"
export OMPI_MCA_orte_tmpdir_base=$ompi_tmp
# Everything a test's processes make in "the temporary directory" lands in the test's own directory and goes with
# it: an agent killed with SIGKILL on purpose (t0410, t0295, t0474...) cannot remove its /tmp/hpclaunch-agent-*,
# and torchrun as a peer leaves /tmp/torchelastic_*.
export TMPDIR=$test_tmp/tmp
mkdir -p "$TMPDIR"
_lib_cleanup() {
  # _lib_cleanup [STATUS]: a trap that runs other commands first passes the test's status on as STATUS (`(exit
  # $rc)` before the call failed under `set -e` and ended the trap there, leaving a failed test's directory).
  local rc=${1:-$?} skipped=0
  if [ $rc = 0 ] && [ -n "${skipped_part:-}" ]; then
    echo "SKIP $test_label: $skipped_part (the rest passed)" >&2
    rc=77 skipped=1
  fi
  rm -rf "$ompi_tmp"
  if [ "${HPCLAUNCH_KEEP_TMP:-0}" = 1 ] || { [ $rc -ne 0 ] && [ $rc -ne 77 ] && [ "${HPCLAUNCH_KEEP_TMP:-}" = failed ]; }; then
    echo "$test_name: kept $test_tmp" >&2
  else
    rm -rf "$test_tmp"
  fi
  # Only a skipped part changes the exit status; otherwise the script's own stands.
  [ $skipped = 0 ] || exit 77
  return $rc
}
trap _lib_cleanup EXIT

# A test's body run by another test (run_on_netns_cluster) reports under that test's name.
test_label=${HPCLAUNCH_TEST_LABEL:-$test_name}
# (inside wait_until's CONDITION, whose own output is kept aside, to the test's stderr all the same)
fail() { echo "FAIL $test_label: $*" >&"${_wu_stderr:-2}"; exit 1; }
skip() { echo "SKIP $test_label: $*" >&2; exit 77; }
# skip_part REASON: a part of the test cannot run here. The rest runs and asserts as ever; when it passes, the test
# ends as skipped (77) with REASON, never as a pass that did not check everything it says it checks.
skipped_part=""
skip_part() { note "not run: $*"; skipped_part+="${skipped_part:+; }$*"; }
note() { echo "$test_label: $*" >&2; }

assert_eq() {  # EXPECTED ACTUAL [WHAT]
  [ "$1" = "$2" ] || fail "${3:-value}: expected '$1', got '$2'"
}
assert_contains() {  # HAYSTACK NEEDLE [WHAT]
  case $1 in *"$2"*) ;; *) fail "${3:-output} does not contain '$2'; it is: $1" ;; esac
}
assert_not_contains() {  # HAYSTACK NEEDLE [WHAT]
  case $1 in *"$2"*) fail "${3:-output} contains '$2'; it is: $1" ;; *) ;; esac
}
assert_file() {  # PATH
  [ -f "$1" ] || fail "expected file '$1' does not exist"
}
# Runs a command that must fail: assert_fails EXPECTED_TEXT CMD ARG...; the text must be in its stderr+stdout.
assert_fails() {
  local want=$1 out rc=0
  shift
  out=$("$@" 2>&1) || rc=$?
  [ $rc -ne 0 ] || fail "'$*' succeeded; it should have failed with '$want'. Output: $out"
  assert_contains "$out" "$want" "error from '$*'"
}

# The one-time work of a test (a build in a folder of its own) is done by scripts/test.sh's prepare phase, one
# test at a time, before CTest runs them side by side: with HPCLAUNCH_PREPARE=1 a test stops here, right after
# that work (tests/CMakeLists.txt says which tests have such work, and why they are prepared alone).
prepared() {
  if [ "${HPCLAUNCH_PREPARE:-0}" = 1 ]; then
    note "prepared (the test itself runs under CTest)"
    exit 0
  fi
}

# main_build_type: the -D arguments that configure another build folder as the main build (HPCLAUNCH_BUILD_DIR) is
# configured, its build type and that type's flags (CMakeLists.txt's default, or what it was given), so that its
# objects come from ccache (t0710, t0720); Release when there is no main build.
main_build_type() {
  local cache=$HPCLAUNCH_BUILD_DIR/CMakeCache.txt type flags
  type=$(sed -n 's/^CMAKE_BUILD_TYPE:STRING=//p' "$cache" 2>/dev/null || true)
  echo "-DCMAKE_BUILD_TYPE=${type:-Release}"
  flags=$(grep "^CMAKE_CXX_FLAGS_${type^^}:" "$cache" 2>/dev/null | head -n 1 || true)
  [ -z "$type" ] || [ -z "$flags" ] || echo "-D${flags%%:*}=${flags#*=}"
}

need_cmd() {  # CMD...: fail (not skip) if a tool install-deps.sh installs is missing
  local c
  for c in "$@"; do command -v "$c" >/dev/null || fail "'$c' not found; run scripts/install-deps.sh"; done
}

# peer_python: the peers' venv's python (scripts/peers-venv.sh: torch 2.15 from PyPI, its torchrun, submitit,
# Lightning); fails (not skips) when it is missing, since install-deps.sh makes it.
peer_python() {
  local venv=${HPCLAUNCH_PEER_VENV:-${HPCLAUNCH_ROOTS:-/opt/hpclaunch}/peers-venv}
  [ -x "$venv/bin/python" ] || fail "no peers' venv in $venv; run scripts/install-deps.sh (or scripts/peers-venv.sh)"
  echo "$venv/bin/python"
}

need_hpclaunch() {
  [ -x "$HPCLAUNCH" ] || fail "hpclaunch binary '$HPCLAUNCH' not found; build first or set HPCLAUNCH"
}

# The test cluster (scripts/test-cluster.sh, started by CTest's slurm fixture for every *-slurm-* script).
need_cluster() {
  local envsh=$HPCLAUNCH_CLUSTER_DIR/env.sh
  [ -f "$envsh" ] || fail "no test cluster in $HPCLAUNCH_CLUSTER_DIR (no env.sh); run scripts/test-cluster.sh start $HPCLAUNCH_CLUSTER_DIR, or name the test *-slurm-* so CTest starts it"
  # shellcheck disable=SC1090
  source "$envsh"
  "$HPCLAUNCH_SOURCE_DIR/scripts/test-cluster.sh" status "$HPCLAUNCH_CLUSTER_DIR" >/dev/null \
    || fail "test cluster in $HPCLAUNCH_CLUSTER_DIR is not running; run scripts/test-cluster.sh start $HPCLAUNCH_CLUSTER_DIR"
  # A test of another Slurm version's lane (NAME@24.11: tests/CMakeLists.txt sets HPCLAUNCH_SLURM_VERSION) fails on
  # a cluster of another version: its pass would say nothing of the one it names.
  if [ -n "${HPCLAUNCH_SLURM_VERSION:-}" ]; then
    local version
    version=$(sinfo --version 2>&1 || true)
    [[ $version =~ ^slurm(-wlm)?\ ${HPCLAUNCH_SLURM_VERSION//./\\.}\. ]] \
      || fail "the test cluster in $HPCLAUNCH_CLUSTER_DIR runs '$version', not Slurm $HPCLAUNCH_SLURM_VERSION (HPCLAUNCH_SLURM_VERSION)"
  fi
}

# The netns cluster (TEST_CLUSTER_NETNS=1 scripts/test-cluster.sh, started by CTest's slurm_netns fixture for every
# *-netns-* script): each node in its own network namespace, with its own address and host name.
need_netns_cluster() {
  HPCLAUNCH_CLUSTER_DIR=${HPCLAUNCH_NETNS_CLUSTER_DIR:-$HPCLAUNCH_BUILD_DIR/test-cluster-netns}
  [ -f "$HPCLAUNCH_CLUSTER_DIR/netns" ] || fail "no netns test cluster in $HPCLAUNCH_CLUSTER_DIR; run TEST_CLUSTER_NETNS=1 scripts/test-cluster.sh start $HPCLAUNCH_CLUSTER_DIR, or name the test *-netns-* so CTest starts it"
  need_cluster
}

# run_on_netns_cluster BODY: the loopback cluster's test tests/integration/BODY, unchanged, on the netns cluster.
run_on_netns_cluster() {
  need_netns_cluster
  HPCLAUNCH_TEST_LABEL="$test_name ($1 on the netns cluster)" bash "$HPCLAUNCH_SOURCE_DIR/tests/integration/$1"
}

# sbatch_wait OUTFILE [SBATCH_ARG...] SCRIPT: submits, waits until the job ends (bounded by SBATCH_TIMEOUT, default
# 300 s), fails the test with the job's output unless it COMPLETED. It watches the job as wait_job does (every
# 0.5 s), not with `sbatch --wait`, which looks after 2 s, 10 s, then every 32 s (sbatch.c: MAX_WAIT_SLEEP_TIME, as
# MinJobAge is 30 s): a job done in 11 s was seen done at 42 s.
sbatch_wait() {
  local out=$1 id state
  shift
  id=$(sbatch --parsable -o "$out" -e "$out" "$@") || fail "sbatch $* failed: $id"
  id=${id%%;*}
  state=$(wait_job "$id" "${SBATCH_TIMEOUT:-300}") || fail "sbatch $*: job $id did not end; job output:
$(cat "$out" 2>/dev/null || echo '(none)')"
  [ "$state" = COMPLETED ] || fail "sbatch $*: job $id ended $state; job output:
$(cat "$out" 2>/dev/null || echo '(none)')"
}

# Lines of FILE that start with PREFIX, prefix removed, sorted.
# index_dirs FILE: the job directories of a job index, one a line (its lines are {"dir":"..."} objects, or plain
# directories as indexes written before; test directories hold no quote or backslash).
index_dirs() { sed -E 's/^\{"dir":"(.*)"\}$/\1/' "$1"; }
lines_with() { untag <"$1" | grep "^$2" | sed "s/^$2//" | sort || true; }
# untag: stdin without mpirun --tag-output's "[JOB,RANK]<stdout>:" prefixes.
untag() { sed -E 's/^\[[0-9]+,[0-9]+\]<std(out|err)>://'; }
# assert_workers OUTPUT RANKS MASTER WHAT: the job output OUTPUT has, after any mpirun tag or srun label, one line
# `worker R RANKS MASTER` for each rank R below RANKS and no other (the every-site tests' workers print them).
assert_workers() {
  local expected="" r
  for ((r = 0; r < $2; r++)); do expected+="$r $2 $3"$'\n'; done
  local got
  got=$(untag <"$1" | grep -oE 'worker [0-9]+ [0-9]+ [^ ]*$' | sed 's/^worker //' | sort -n)
  assert_eq "${expected%$'\n'}" "$got" "$4"
}

# client_conf OUT [SED_SCRIPT]: a copy of the test cluster's slurm.conf (edited by SED_SCRIPT) for Slurm commands
# that must give up soon on a controller that does not answer: MessageTimeout=2, so each retries it for about 2 s
# instead of ~18 s at the default 10 (t0297's watchers through a restart, t0610's commands against a dead port).
client_conf() {
  { sed -e "/^MessageTimeout=/d" -e "${2:-}" "$SLURM_CONF"; echo "MessageTimeout=2"; } >"$1"
}

# job_state ID: the Slurm job's state (empty once Slurm has forgotten it).
job_state() { scontrol show job "$1" 2>/dev/null | sed -n 's/.*JobState=\([A-Z_]*\).*/\1/p'; }
# wait_job ID [SECONDS]: until the Slurm job ends (default bound 300 s); prints its final state.
wait_job() {
  local id=$1 state=""
  wait_until --every 0.5 --on-timeout "scancel $id 2>/dev/null" "${2:-300}" "job $id to end" \
    'state=$(job_state "$id"); echo "JobState=$state"; job_ended "$state"'
  echo "$state"
}
job_ended() {
  case $1 in COMPLETED|FAILED|CANCELLED|TIMEOUT|NODE_FAIL|OUT_OF_MEMORY|BOOT_FAIL|DEADLINE|PREEMPTED) ;; *) return 1 ;; esac
}

# submit_test_site SITE JOBDIR ARG...: `hpclaunch submit` with the test profile tests/integration/sites/SITE.yaml.
submit_test_site() {
  local site=$1 dir=$2
  shift 2
  "$HPCLAUNCH" submit --site "$site" --site-file "$HPCLAUNCH_SOURCE_DIR/tests/integration/sites/$site.yaml" \
    --job-dir "$dir" "$@"
}
