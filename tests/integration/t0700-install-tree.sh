#!/usr/bin/env bash
# `cmake --install` of the build tree into a prefix (docs/install.md): bin/hpclaunch (and hpclaunch-train when it
# is built), a man page per command that groff reads without a warning, bash/zsh/fish completion that complete
# site names and launchers, and the docs. The prefix is then moved, and the moved copy works with the source and
# build trees hidden (a mount namespace, when root): --version, sites, render, and a local job whose script calls
# the moved binary by its absolute path. Also --version's commit: git describe, HPCLAUNCH_COMMIT, or "unknown".
# Run after a build of hpclaunch (which makes the pages); about 5 s.
source "$(dirname "$0")/lib.sh"
need_hpclaunch
need_cmd cmake groff git
for v in $(env | grep -oE '^(SLURM|PBS|PMI|OMPI_COMM|HPCLAUNCH_(LOCAL|JOB|GPU))[A-Z_]*' || true); do unset "$v"; done
unset MASTER_ADDR MASTER_PORT
export XDG_CONFIG_HOME=$test_tmp/config XDG_STATE_HOME=$test_tmp/state XDG_DATA_HOME=$test_tmp/data

# The pages and completion scripts are made with every build of hpclaunch; made here only when missing (building while
# other tests run the binary could relink it under them).
if [ ! -f "$HPCLAUNCH_BUILD_DIR/launcher/generated/stamp" ]; then
  cmake --build "$HPCLAUNCH_BUILD_DIR" --target hpclaunch_docs >"$test_tmp/build.log" 2>&1 \
    || fail "building hpclaunch_docs failed: $(tail -20 "$test_tmp/build.log")"
fi
cmake --install "$HPCLAUNCH_BUILD_DIR" --prefix "$test_tmp/prefix" >"$test_tmp/install.log" 2>&1 \
  || fail "cmake --install failed: $(tail -20 "$test_tmp/install.log")"

prefix=$test_tmp/prefix
assert_file "$prefix/bin/hpclaunch"
if [ -n "${HPCLAUNCH_TRAIN:-}" ]; then assert_file "$prefix/bin/hpclaunch-train"; fi
assert_file "$prefix/share/bash-completion/completions/hpclaunch"
assert_file "$prefix/share/zsh/site-functions/_hpclaunch"
assert_file "$prefix/share/fish/vendor_completions.d/hpclaunch.fish"
assert_file "$prefix/share/doc/hpclaunch/README.md"
assert_file "$prefix/share/doc/hpclaunch/docs/install.md"
assert_file "$prefix/share/doc/hpclaunch/site-profiles/perlmutter.yaml"

# A page for hpclaunch and for every command `hpclaunch --help` lists, each read by groff without a warning.
commands=$("$prefix/bin/hpclaunch" --help | sed -n '/^commands:/,/^$/p' | awk 'NF > 1 { print $1 }')
[ "$(echo "$commands" | wc -l)" -ge 10 ] || fail "too few commands in --help: $commands"
for page in hpclaunch $(echo "$commands" | sed 's/^/hpclaunch-/'); do
  f=$prefix/share/man/man1/$page.1
  assert_file "$f"
  warnings=$(groff -man -Tutf8 -ww -z "$f" 2>&1) || fail "groff failed on $page.1: $warnings"
  [ -z "$warnings" ] || fail "groff warns on $page.1: $warnings"
done
page=$(MANPATH=$prefix/share/man MANWIDTH=200 man hpclaunch-submit 2>/dev/null | col -b)
assert_contains "$page" "hpclaunch-submit - render a batch script"
assert_contains "$page" "--site TEXT"
assert_contains "$(MANPATH=$prefix/share/man MANWIDTH=200 man hpclaunch 2>/dev/null | col -b)" "hpclaunch completion"

# Move the prefix: nothing in it may point back to where it was installed, nor to the source or build tree.
mv "$prefix" "$test_tmp/moved"
moved=$test_tmp/moved
hl=$moved/bin/hpclaunch
run_hidden() {  # CMD...: with the source and build trees hidden behind empty directories when we can
  if [ "$(id -u)" = 0 ] && unshare -m true 2>/dev/null; then
    unshare -m bash -c 'mount -t tmpfs none "$1" && mount -t tmpfs none "$2" && shift 2 && "$@"' _ \
      "$HPCLAUNCH_BUILD_DIR" "$HPCLAUNCH_SOURCE_DIR" "$@"
  else
    "$@"
  fi
}
if [ "$(id -u)" = 0 ] && unshare -m true 2>/dev/null; then
  run_hidden test ! -e "$HPCLAUNCH_SOURCE_DIR/CMakeLists.txt" || fail "the source tree was not hidden"
else
  skip_part "not root or no unshare: the moved prefix runs with the source and build trees still visible"
fi
cd "$test_tmp"
version=$(run_hidden "$hl" --version) || fail "--version failed"
want=$(sed -n 's/.*return "\(.*\)";.*/\1/p' "$HPCLAUNCH_BUILD_DIR/launcher/build_info.cc")
assert_eq "hpclaunch $(sed -n 's/^project(hpclaunch VERSION \([0-9.]*\).*/\1/p' "$HPCLAUNCH_SOURCE_DIR/CMakeLists.txt") (commit $want)" \
  "$version" "--version of the installed binary"
assert_contains "$(run_hidden "$hl" sites)" "perlmutter"
script=$(run_hidden "$hl" render --site perlmutter --nodes 2 --account m1234_g -- python train.py) || fail "render failed"
assert_contains "$script" "HPCLAUNCH=$hl"
assert_contains "$script" '"$HPCLAUNCH" exec'
out=$(run_hidden "$hl" submit --site local --nodes 2 --gpus-per-node 1 --job-dir "$test_tmp/job" \
  -- bash -c 'echo "task $RANK of $WORLD_SIZE"' 2>&1) || fail "a local job from the moved prefix failed: $out"
assert_eq "task 0 of 2
task 1 of 2" "$(echo "$out" | grep -o 'task [0-9] of 2' | sort)" "the local job's ranks"
assert_contains "$(cat "$test_tmp/job/"*.sh)" "HPCLAUNCH=$hl"
# The torchrun face: the installed link (relative, so it moved with the prefix) runs the agent as torchrun.
[ -L "$moved/libexec/hpclaunch/torchrun/torchrun" ] || fail "no libexec/hpclaunch/torchrun/torchrun link"
out=$(PATH="$moved/libexec/hpclaunch/torchrun:$PATH" run_hidden torchrun --standalone --nproc_per_node=2 --no-python \
  bash -c 'echo "worker $RANK of $WORLD_SIZE"' 2>&1) || fail "the installed torchrun failed: $out"
assert_eq "worker 0 of 2
worker 1 of 2" "$(echo "$out" | grep -o 'worker [0-9] of 2' | sort)" "the installed torchrun's workers"

# Completion from the installed scripts: bash and fish run them; zsh reads its script (no terminal here).
reply=$(PATH=$moved/bin:$PATH bash -c 'source "$1"; COMP_WORDS=(hpclaunch submit --site per); COMP_CWORD=3; _hpclaunch
  echo "${COMPREPLY[*]}"; COMP_WORDS=(hpclaunch render --launcher ""); COMP_CWORD=3; _hpclaunch; echo "${COMPREPLY[*]}"
  COMP_WORDS=(hpclaunch si); COMP_CWORD=1; _hpclaunch; echo "${COMPREPLY[*]}"' _ \
  "$moved/share/bash-completion/completions/hpclaunch")
# The launchers offered are the registry's, as submit --help names them (a scheduler folder's own join them).
launchers=$("$hl" submit --help | sed -n 's/^ *--launcher TEXT *//p' |
  sed 's/ (one task per node)//; s/ (one task per GPU)//; s/ or /, /g; s/, / /g')
assert_contains "$launchers" "agent srun mpirun pals"
assert_eq "perlmutter
$launchers
sites" "$reply" "bash completion of --site per, --launcher and si"
if command -v fish >/dev/null; then
  reply=$(PATH=$moved/bin:$PATH fish -c "source $moved/share/fish/vendor_completions.d/hpclaunch.fish
    complete -C 'hpclaunch submit --site roi'; complete -C 'hpclaunch sites show juw'" | cut -f1)
  assert_eq "roihu
juwels-booster" "$reply" "fish completion of site names"
fi
if command -v zsh >/dev/null; then
  zsh -n "$moved/share/zsh/site-functions/_hpclaunch" || fail "zsh cannot read _hpclaunch"
fi

# The commit --version names (cmake/BuildInfo.cmake): git describe of a checkout, -dirty when it has changes,
# HPCLAUNCH_COMMIT when given (packagers), "unknown" for a tarball even inside another repository.
commit_of() {  # SOURCE_DIR [COMMIT]
  cmake -DSOURCE_DIR="$1" -DOUT="$test_tmp/bi.cc" -DCOMMIT="${2:-}" -P "$HPCLAUNCH_SOURCE_DIR/cmake/BuildInfo.cmake" \
    && sed -n 's/.*return "\(.*\)";.*/\1/p' "$test_tmp/bi.cc"
}
repo=$test_tmp/repo
mkdir -p "$repo/tarball"
git -C "$repo" init -q && echo a >"$repo/f" && git -C "$repo" add f
git -C "$repo" -c user.name=t -c user.email=t@t commit -q -m one && git -C "$repo" tag v9.9
assert_eq "v9.9" "$(commit_of "$repo")" "commit of a tagged checkout"
echo b >"$repo/f"
assert_eq "v9.9-dirty" "$(commit_of "$repo")" "commit of a changed checkout"
assert_eq "unknown" "$(commit_of "$repo/tarball")" "commit of a directory inside a checkout"
assert_eq "v1.2.3" "$(commit_of "$repo/tarball" v1.2.3)" "commit given by HPCLAUNCH_COMMIT"
mkdir -p "$test_tmp/notgit"
assert_eq "unknown" "$(commit_of "$test_tmp/notgit")" "commit of a tarball"
[ -n "$want" ] && [ "$want" != unknown ] || fail "the build's commit is '$want'"
echo "ok"
