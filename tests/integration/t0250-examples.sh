#!/usr/bin/env bash
# examples/*.yaml are ready job specs for every built-in site (the seeds' jobs): each renders, for its site,
# with the command it lists (hpclaunch-train's, or a user's script where the trainer cannot run: Aurora's XPUs);
# and every built-in site has one.
source "$(dirname "$0")/lib.sh"
need_hpclaunch
cd "$test_tmp"
examples=$HPCLAUNCH_SOURCE_DIR/examples
seen=" "
for spec in "$examples"/*.yaml; do
  site=$(sed -n 's/^site: *//p' "$spec")
  [ -n "$site" ] || fail "$spec has no site:"
  account=$("$HPCLAUNCH" sites show "$site" | sed -n 's/^ *example: *//p')
  args=()
  [ -z "$account" ] || args=(--account "$account")
  script=$("$HPCLAUNCH" render --spec "$spec" "${args[@]}" 2>"$test_tmp/err") \
    || fail "$(basename "$spec") does not render: $(cat "$test_tmp/err")"
  command=$(sed -n '/^command:/,/^[a-z]/s/^  - //p' "$spec" | head -n 2 | paste -sd' ')
  [ -n "$command" ] || fail "$(basename "$spec") has no command list"
  assert_contains "$script" "$command" "script of $(basename "$spec")"
  # The site's scheduler wrote it: its template's directive lines (Slurm's `#SBATCH {{.}}`, read from its folder, so a
  # new scheduler needs no line here) carry the time limit; a template without directives (local) has none.
  scheduler=$("$HPCLAUNCH" sites show "$site" | sed -n 's/^scheduler: *//p')
  template=$HPCLAUNCH_SOURCE_DIR/launcher/schedulers/$scheduler/$scheduler.sh.mustache
  [ -f "$template" ] || fail "site $site's scheduler '$scheduler' has no template at $template"
  prefix=$(grep -A1 '^{{#directives}}$' "$template" | sed -n '2s/{{\.}}.*//p' || true)
  if [ -n "$prefix" ]; then
    line=$(grep -F -- "$prefix" <<<"$script" | grep -E -- "time|walltime|-t " | head -1 || true)
    [ -n "$line" ] || fail "script of $(basename "$spec") has no '$prefix' line with its time limit: $script"
  elif [ "$scheduler" = local ]; then
    assert_contains "$script" "local-srun --no-kill --nodes 2" "script of $(basename "$spec")"
  fi
  seen+="$site "
done
for profile in "$HPCLAUNCH_SOURCE_DIR"/site-profiles/*.yaml; do
  site=$(basename "$profile" .yaml)
  assert_contains "$seen" " $site " "sites with an example in examples/"
done

# The flags on the command line replace the spec's values.
script=$("$HPCLAUNCH" render --spec "$examples/perlmutter-unet3d.yaml" --account m1_g --nodes 3 --qos debug --time 20)
assert_contains "$script" "#SBATCH --nodes=3"
assert_contains "$script" "#SBATCH --qos=debug"
script=$("$HPCLAUNCH" render --spec "$examples/perlmutter-unet3d.yaml" --account m1_g -- python other.py)
assert_contains "$script" "exec -- python other.py"

# A broken spec is one line naming file:line:column.
printf 'site: perlmutter\nnodez: 2\ncommand: [x]\n' >"$test_tmp/bad.yaml"
assert_fails "$test_tmp/bad.yaml:2:1: unknown key 'nodez' (did you mean 'nodes'?)" \
  "$HPCLAUNCH" render --spec "$test_tmp/bad.yaml" --account m1_g
assert_fails "--spec: cannot read job spec '$test_tmp/none.yaml'" "$HPCLAUNCH" render --spec "$test_tmp/none.yaml"

# The example site file of a GB200 NVL72 cloud cluster (examples/sites/gb200-nvl72.yaml): its command line as the
# file gives it renders whole racks (--segment=18, --exclusive=topo); 20 nodes are refused in one line.
line=$(sed -n 's/^#   \(hpclaunch render .*\)$/\1/p' "$examples/sites/gb200-nvl72.yaml")
[ -n "$line" ] || fail "examples/sites/gb200-nvl72.yaml shows no command line"
script=$(cd "$HPCLAUNCH_SOURCE_DIR" && eval "\"\$HPCLAUNCH\" ${line#hpclaunch }") || fail "the NVL72 example does not render"
assert_contains "$script" "#SBATCH --segment=18"
assert_contains "$script" "#SBATCH --exclusive=topo"
assert_contains "$script" "#SBATCH --nodes=36"
rc=0
err=$("$HPCLAUNCH" render --site-file "$examples/sites/gb200-nvl72.yaml" --site gb200-nvl72 --nodes 20 -- python train.py 2>&1) || rc=$?
assert_eq 2 "$rc" "20 nodes in racks of 18"
assert_contains "$err" "--segment: 20 node(s) are not a multiple of the segment size 18; use --nodes 18 or 36"
