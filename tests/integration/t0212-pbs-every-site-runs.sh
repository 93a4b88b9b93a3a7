#!/usr/bin/env bash
# Every rendered PBS script runs: for every built-in PBS site and every launcher it allows, the script `hpclaunch
# render` writes is run as PBS runs it — from $HOME, with a PBS Pro job's variables and a node file of two hosts —
# until every worker prints its rank, the world size and MASTER_ADDR. The golden files check the text; this checks
# that the text works. First found here: Gadi's agent launch (both agents exited 2: no MASTER_ADDR read).
# What cannot run here is stood in for, and only that: no PBS server (the variables, lib-mpi.sh's pbs_job_env), no
# sshd for the hosts n1, n2 (the ssh stand-in starts orted on this machine; everything after it is real Open MPI),
# no Lmod or conda (`module` and `conda` do nothing), and no Cray PALS (Polaris, Derecho): a stand-in mpiexec starts
# its ranks here with the variables PALS sets (PALS_RANKID, PALS_LOCAL_RANKID, PALS_NODEID, PMI_SIZE, ...), and
# writes down the CPU binding it was asked for (one machine of 2 cores cannot bind Aurora's 12 CPU sets).
# Aurora (intel): each rank must be told its own tile in ZE_AFFINITY_MASK (its local rank: PALS lists no devices),
# LOCAL_RANK 0, and the MASTER_ADDR of the site's rule (this host's name with the Slingshot suffix).
source "$(dirname "$0")/lib.sh"
need_hpclaunch
source "$(dirname "$0")/lib-mpi.sh"
need_cmd python3

mkdir -p "$test_tmp/work" "$test_tmp/bin"
for stub in module conda; do printf '#!/bin/sh\nexit 0\n' >"$test_tmp/bin/$stub"; done
cat >"$test_tmp/bin/mpiexec" <<'PALS'
#!/usr/bin/env bash
# Cray PALS's mpiexec, as the rendered line uses it: -n N --ppn P [--depth D] [--cpu-bind B] CMD...; ranks fill a
# node before the next, each with PALS's variables (PALS passes the caller's environment on).
n=1 ppn=1
while [ $# -gt 0 ]; do
  case $1 in
    -n|--np) n=$2; shift 2 ;;
    --ppn) ppn=$2; shift 2 ;;
    --depth|--cpu-bind|-d) shift 2 ;;
    --cpu-bind=*) echo "${1#--cpu-bind=}" >"${PALS_STAND_IN_CPU_BIND:-/dev/null}"; shift ;;
    *) break ;;
  esac
done
for ((r = 0; r < n; r++)); do
  PALS_RANKID=$r PALS_LOCAL_RANKID=$((r % ppn)) PALS_NODEID=$((r / ppn)) PALS_LOCAL_SIZE=$ppn PALS_DEPTH=1 \
    PALS_APID=stand-in-$$ PMI_RANK=$r PMI_SIZE=$n PMI_LOCAL_RANK=$((r % ppn)) PMI_LOCAL_SIZE=$ppn "$@" &
done
rc=0
for ((r = 0; r < n; r++)); do wait -n || rc=$?; done
exit $rc
PALS
chmod +x "$test_tmp/bin/"*

# The built-in PBS sites still in service, each launcher they allow and an account of the form they want, as
# `sites --json` and `sites show NAME --json` give them.
cases=()
for site in $("$HPCLAUNCH" sites --json | python3 -c '
import json, sys
print(" ".join(s["name"] for s in json.load(sys.stdin)["sites"] if s["scheduler"] == "pbs" and s["status"] == "active"))
'); do
  mapfile -t -O "${#cases[@]}" cases < <("$HPCLAUNCH" sites show "$site" --json | python3 -c '
import json, sys
p = json.load(sys.stdin)["profile"]
for launcher in p["launch"]["allowed"]:
    print(p["name"], launcher, p.get("account", {}).get("example") or "none")
')
done
[ "${#cases[@]}" -ge 4 ] || fail "fewer PBS sites and launchers than the four built in: ${cases[*]}"

report='echo "worker $RANK $WORLD_SIZE $MASTER_ADDR"; echo "device ${HPCLAUNCH_NODE_LOCAL_RANK-} $LOCAL_RANK ${ZE_AFFINITY_MASK-}"'
host=$(hostname -s)
id=$((100 + $$ % 9000))
for case in "${cases[@]}"; do
  read -r site launcher account <<<"$case"
  job=$test_tmp/job-$site-$launcher
  "$HPCLAUNCH" render --site "$site" --launcher "$launcher" --nodes 2 --account "$account" --job-dir "$job" \
    -- sh -c "$report" >"$job.sh" 2>"$job.render.err" || fail "render --site $site --launcher $launcher: $(cat "$job.render.err")"
  ranks=$(sed -nE 's/^# Launch: .* = world size ([0-9]+);$/\1/p' "$job.sh")
  [ -n "$ranks" ] || fail "$site $launcher: the script names no world size"
  id=$((id + 1))
  (
    # One node-file line per CPU slot of each host (Gadi's form; the rendered lines must not place ranks by slots).
    nodefile=()
    for h in n1 n2; do for _ in 1 2 3 4 5 6 7 8; do nodefile+=("$h"); done; done
    pbs_job_env "$id.pbs-$site" "${nodefile[@]}"
    export PBS_O_WORKDIR=$test_tmp/work OMPI_MCA_plm_rsh_agent=$(make_fake_ssh) PATH=$test_tmp/bin:$PATH \
      PALS_STAND_IN_CPU_BIND=$job.cpu-bind
    cd "$HOME"
    timeout 180 bash "$job.sh" >"$job.out" 2>"$job.err" \
      || fail "$site --launcher $launcher: the rendered script failed: $(tail -n 5 "$job.out" "$job.err")"
  )
  profile=$("$HPCLAUNCH" sites show "$site" --json)
  suffix=$(python3 -c 'import json, sys; print(json.load(sys.stdin)["profile"]["rendezvous"].get("suffix", ""))' <<<"$profile")
  assert_workers "$job.out" "$ranks" "$host$suffix" "$site --launcher $launcher: the workers' RANK WORLD_SIZE MASTER_ADDR"
  if grep -q '^export HPCLAUNCH_ACCELERATOR=intel$' "$job.sh"; then
    ppn=$((ranks / 2))
    expected=$(for ((n = 0; n < 2; n++)); do for ((l = 0; l < ppn; l++)); do echo "$l 0 $l"; done; done | sort)
    got=$(grep -oE '^device .*' "$job.out" | sed 's/^device //' | sort)
    assert_eq "$expected" "$got" "$site: each rank's node-local rank, LOCAL_RANK and ZE_AFFINITY_MASK"
    cpus=$(python3 -c 'import json, sys; print(json.load(sys.stdin)["profile"]["pbs"]["pals_cpu_bind"])' <<<"$profile")
    assert_eq "$cpus" "$(cat "$job.cpu-bind")" "$site: the CPU lists PALS was given"
    [ "$(tr ':' '\n' <<<"${cpus#list:}" | wc -l)" -eq "$ppn" ] || fail "$site: $cpus has not one CPU set for each of the $ppn ranks of a node"
  fi
done
echo "ok: ${#cases[@]} scripts ran: ${cases[*]}"
