#!/usr/bin/env bash
# packaging/spack/package.py and packaging/easybuild/*.eb, as far as can be checked without Spack, EasyBuild or
# a network: both are Python with the fields their tool needs; the CMake arguments Spack's package gives for each
# variant (run with a stand-in for Spack's package API) and the easyconfig's configopts configure this source
# tree with the options they mean; the easyconfig's sanity paths and commands hold for `cmake --install` of the
# build tree. About 30 s (four CMake configure runs).
source "$(dirname "$0")/lib.sh"
need_hpclaunch
need_cmd cmake python3
src=$HPCLAUNCH_SOURCE_DIR
version=$(sed -n 's/^project(hpclaunch VERSION \([0-9.]*\).*/\1/p' "$src/CMakeLists.txt")
eb=$src/packaging/easybuild/hpclaunch-$version-GCC-13.2.0.eb
assert_file "$src/packaging/spack/package.py"
assert_file "$eb"
python3 -m py_compile "$src/packaging/spack/package.py" || fail "package.py does not compile"
python3 -m py_compile "$eb" || fail "$(basename "$eb") does not compile"

# The one-header mustache library both fetch, from Debian's copy, where each puts it.
mkdir -p "$test_tmp/stage/third_party/kainjow" "$test_tmp/eb/Mustache-4.1"
cp /usr/include/kainjow/mustache.hpp "$test_tmp/stage/third_party/kainjow/"
cp /usr/include/kainjow/mustache.hpp "$test_tmp/eb/Mustache-4.1/"

# Spack: the package's directives and cmake_args() for each variant, one configure line per variant.
python3 - "$src/packaging/spack/package.py" "$test_tmp/stage" >"$test_tmp/spack-args" <<'PY' || fail "package.py: $(cat "$test_tmp/spack-args")"
import os, sys, types
directives = {"version": [], "variant": [], "depends_on": [], "conflicts": [], "resource": []}
api = types.ModuleType("spack.package")
for kind in directives:
    setattr(api, kind, lambda *a, _k=kind, **kw: directives[_k].append((a, kw)))

class Spec:
    def __init__(self, on): self.on = on
    def satisfies(self, s):
        return all((w[1:] in self.on) == (w[0] == "+") for w in s.split())

class CMakePackage:
    def __init__(self, on, stage):
        self.spec, self.run_tests = Spec(on), False
        self.stage = types.SimpleNamespace(source_path=stage)
    def define(self, name, value):
        if isinstance(value, bool):
            return "-D%s:BOOL=%s" % (name, "ON" if value else "OFF")
        return "-D%s:STRING=%s" % (name, value)
    def define_from_variant(self, name, variant):
        if variant not in [v[0][0] for v in directives["variant"]]:
            raise SystemExit("define_from_variant names an unknown variant '%s'" % variant)
        return self.define(name, self.spec.satisfies("+" + variant))

api.CMakePackage, api.join_path = CMakePackage, os.path.join
sys.modules["spack"] = types.ModuleType("spack")
sys.modules["spack.package"] = api
scope = {}
exec(compile(open(sys.argv[1]).read(), sys.argv[1], "exec"), scope)
cls = scope["Hpclaunch"]
assert cls.__doc__ and cls.homepage and cls.git, "docstring, homepage and git"
variants = {v[0][0]: v[1] for v in directives["variant"]}
assert {"trainer", "static", "plot"} <= set(variants), variants
deps = {d[0][0].split("@")[0].split("+")[0].split("~")[0] for d in directives["depends_on"]}
for need in ["cmake", "yaml-cpp", "fmt", "cli11", "nlohmann-json", "boost", "openssl", "hwloc", "pkgconfig", "plplot", "py-torch"]:
    assert need in deps, "no depends_on(%r)" % need
assert any(c[0][0] == "+trainer" and c[1].get("when") == "+static" for c in directives["conflicts"])
for name, on in [("default", {"plot"}), ("static", {"static"}), ("trainer", {"plot", "trainer"})]:
    print(name, " ".join(cls(on, sys.argv[2]).cmake_args()))
PY
while read -r variant args; do
  # shellcheck disable=SC2086
  cmake -S "$src" -B "$test_tmp/spack-$variant" $args >"$test_tmp/spack-$variant.log" 2>&1 \
    || fail "Spack's +$variant arguments do not configure: $args: $(tail -5 "$test_tmp/spack-$variant.log")"
  cache=$(cat "$test_tmp/spack-$variant/CMakeCache.txt")
  case $variant in
    static) assert_contains "$cache" "HPCLAUNCH_STATIC:BOOL=ON" "CMake cache of Spack's +static" ;;
    trainer) assert_contains "$cache" "HPCLAUNCH_BUILD_TRAINER:BOOL=ON" "CMake cache of Spack's +trainer" ;;
    default) assert_contains "$cache" "HPCLAUNCH_PLOT:BOOL=ON" "CMake cache of Spack's default" ;;
  esac
  assert_contains "$cache" "KAINJOW_MUSTACHE_INCLUDE_DIR:STRING=$test_tmp/stage/third_party"
done <"$test_tmp/spack-args"
[ "$(wc -l <"$test_tmp/spack-args")" = 3 ] || fail "expected 3 variants: $(cat "$test_tmp/spack-args")"

# EasyBuild: the easyconfig's fields, then its preconfigopts and configopts as CMakeMake would run them.
python3 - "$eb" "$version" "$test_tmp/eb" >"$test_tmp/eb-parts" <<'PY' || fail "easyconfig: $(cat "$test_tmp/eb-parts")"
import json, sys
scope = {"SOURCE_TAR_GZ": "%(name)s-%(version)s.tar.gz", "SYSTEM": {"name": "system", "version": "system"}}
exec(compile(open(sys.argv[1]).read(), sys.argv[1], "exec"), scope)
for field in ["easyblock", "name", "version", "homepage", "description", "toolchain", "sources", "configopts",
              "sanity_check_paths", "moduleclass"]:
    assert field in scope, "no %s" % field
assert scope["easyblock"] == "CMakeMake", scope["easyblock"]
assert scope["name"] == "hpclaunch" and scope["version"] == sys.argv[2], "name/version"
t = scope["toolchain"]
assert sys.argv[1].endswith("%s-%s-%s-%s.eb" % (scope["name"], scope["version"], t["name"], t["version"])), "file name"
subst = lambda s: s.replace("%(builddir)s", sys.argv[3]).replace("%(version)s", scope["version"])
print(json.dumps({"pre": subst(scope.get("preconfigopts", "")), "configopts": subst(scope["configopts"]),
                  "files": scope["sanity_check_paths"]["files"], "dirs": scope["sanity_check_paths"]["dirs"],
                  "commands": scope.get("sanity_check_commands", [])}))
PY
part() { python3 -c 'import json, sys; v = json.load(open(sys.argv[1]))[sys.argv[2]]; print("\n".join(v) if isinstance(v, list) else v)' "$test_tmp/eb-parts" "$1"; }
(cd "$test_tmp/eb" && eval "$(part pre) cmake -S '$src' -B '$test_tmp/eb/build' $(part configopts)") \
  >"$test_tmp/eb.log" 2>&1 || fail "the easyconfig's configure step fails: $(tail -5 "$test_tmp/eb.log")"
cache=$(cat "$test_tmp/eb/build/CMakeCache.txt")
assert_contains "$cache" "HPCLAUNCH_PLOT:BOOL=OFF" "CMake cache of the easyconfig"
assert_contains "$cache" "HPCLAUNCH_COMMIT:STRING=v$version" "CMake cache of the easyconfig"

# Its sanity check against an installed tree (options that change no installed file aside).
if [ ! -f "$HPCLAUNCH_BUILD_DIR/launcher/generated/stamp" ]; then
  cmake --build "$HPCLAUNCH_BUILD_DIR" --target hpclaunch_docs >"$test_tmp/build.log" 2>&1 \
    || fail "building hpclaunch_docs failed: $(tail -20 "$test_tmp/build.log")"
fi
cmake --install "$HPCLAUNCH_BUILD_DIR" --prefix "$test_tmp/prefix" >/dev/null || fail "cmake --install failed"
while read -r f; do assert_file "$test_tmp/prefix/$f"; done < <(part files)
while read -r d; do [ -d "$test_tmp/prefix/$d" ] || fail "sanity dir $d missing"; done < <(part dirs)
cd "$test_tmp"
while read -r c; do
  PATH=$test_tmp/prefix/bin:$PATH XDG_CONFIG_HOME=$test_tmp/config bash -c "$c" >/dev/null \
    || fail "sanity command '$c' failed"
done < <(part commands)
echo "ok"
