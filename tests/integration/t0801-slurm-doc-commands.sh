#!/usr/bin/env bash
# The command lines README.md and docs/*.md mark `run by t0801` (docs/command-lines.md): lines a user runs on a
# cluster's login node (`hpclaunch sites learn ...`), run as written in t0800's sandbox with the test cluster's
# SLURM_CONF: each must exit 0, and a line with `-o FILE` must have written FILE.
source "$(dirname "$0")/lib.sh"
need_hpclaunch
need_cluster
source "$HPCLAUNCH_SOURCE_DIR/tests/integration/lib-doc.sh"
box_env=(SLURM_CONF="$SLURM_CONF")
# A cluster whose commands are its own (Slurm 24.11 in its root): they come first, as env.sh puts them.
[ ! -d "$HPCLAUNCH_CLUSTER_DIR/bin" ] || box_path="$HPCLAUNCH_CLUSTER_DIR/bin:"
mapfile -t lines < <(python3 "$src/tests/tools/doc_commands.py" "$src" --run-by t0801)
[ "${#lines[@]}" -ge 1 ] || fail "no command line in README/docs is marked 'run by t0801'"
for line in "${lines[@]}"; do
  rc=0
  run_in_box "$line" || rc=$?
  [ $rc = 0 ] || fail "exit $rc: $line
$(tail -10 "$test_tmp/out")"
  out=$(echo "$line" | sed -n 's/.* -o \([^ ]*\).*/\1/p')
  if [ -n "$out" ]; then
    f=$(ls "$box"/work/run.*/"$out" 2>/dev/null | tail -1)
    [ -s "$f" ] || fail "'$line' wrote no $out"
  fi
done
echo "ok"
