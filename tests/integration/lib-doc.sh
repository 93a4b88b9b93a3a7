# Sourced by the tests that run the command lines README.md and docs/*.md show (docs/command-lines.md): t0800 runs
# the unmarked ones, t0801 (Slurm) the ones marked `run by t0801`. After lib.sh.
src=$HPCLAUNCH_SOURCE_DIR
tool=$src/tests/tools/doc_commands.py
need_cmd python3 timeout

# The sandbox every command runs in: HOME and the XDG directories in the test's directory, the built hpclaunch
# (and hpclaunch-train) first on PATH, then the system's directories (Debian's python3, with torch).
box=$test_tmp/box
mkdir -p "$box/bin" "$box/home" "$box/work"
ln -s "$HPCLAUNCH" "$box/bin/hpclaunch"
train=${HPCLAUNCH_TRAIN:-$HPCLAUNCH_BUILD_DIR/trainer/hpclaunch-train}
if [ -x "$train" ]; then ln -s "$train" "$box/bin/hpclaunch-train"; else note "no hpclaunch-train built: lines that run it fail"; fi
box_env=()  # NAME=VALUE... more for the sandbox's environment (the test cluster's SLURM_CONF)
box_path=""  # folders put first on the sandbox's PATH (a test cluster's own commands, DIR/bin: netns, Slurm 24.11)
run_in_box() {  # COMMAND: bash -c COMMAND in the sandbox, in a fresh working directory; its output to $test_tmp/out
  local dir
  dir=$(mktemp -d "$box/work/run.XXXXXX")
  # Relative paths (examples/...) resolve from a working directory of its own with the tree's entries linked in.
  for entry in "$src"/*; do ln -s "$entry" "$dir/$(basename "$entry")"; done
  (cd "$dir" && env -i HOME="$box/home" PATH="$box_path$box/bin:/usr/local/sbin:/usr/local/bin:/usr/sbin:/usr/bin:/sbin:/bin" \
    XDG_CONFIG_HOME="$box/home/.config" XDG_STATE_HOME="$box/home/.local/state" XDG_DATA_HOME="$box/home/.local/share" \
    XDG_CACHE_HOME="$box/home/.cache" TMPDIR="$TMPDIR" LANG=C.UTF-8 TERM=dumb USER="$(id -un)" \
    OMPI_MCA_orte_tmpdir_base="$OMPI_MCA_orte_tmpdir_base" "${box_env[@]}" \
    timeout 300 bash -o pipefail -c "$1") >"$test_tmp/out" 2>&1
}
# A submit for a site other than local: --dry-run (the site's scheduler is not reachable from here).
dry_run_remote() {  # COMMAND -> COMMAND, with --dry-run after `hpclaunch submit` unless its job is for `local`
  local cmd=$1 spec
  case $cmd in *"hpclaunch submit"*) ;; *) echo "$cmd"; return ;; esac
  spec=$(echo "$cmd" | sed -n 's/.*--spec \([^ ]*\).*/\1/p')
  if echo "$cmd" | grep -qE -- '--site(=| )local( |$)' ||
     { [ -n "$spec" ] && grep -qE '^site: *local *$' "$src/$spec" 2>/dev/null; }; then
    echo "$cmd"
  else
    echo "${cmd/hpclaunch submit/hpclaunch submit --dry-run}"
  fi
}
