"""setup.py's own decisions, in seconds: the static build is brought up to date at every wheel (a new commit must
not ship the old binary), its progress is shown and logged, and a Python without `wheel` gets one line saying what
is needed. The static build itself is a fake `cmake` here (the real one takes ~10 CPU-minutes; t0810 builds the
wheel around the real static binary)."""
import os
import shutil
import subprocess
import zipfile

from conftest import SOURCE_DIR

SYSTEM_PYTHON = "/usr/bin/python3"  # Debian's, with python3-setuptools and python3-wheel

# Configures (a CMakeCache.txt) or "builds" launcher/hpclaunch: a static-looking file naming the build's number,
# with cmake's progress lines; every call is recorded.
FAKE_CMAKE = r"""#!/bin/bash
echo "$*" >> "$FAKE_CMAKE_CALLS"
if [ "$1" = --build ]; then
  n=$(( $(cat "$2/count" 2>/dev/null || echo 0) + 1 ))
  echo $n > "$2/count"
  echo "[ 50%] Building CXX object launcher/x.cc.o"
  mkdir -p "$2/launcher"
  printf 'static hpclaunch, build %s\n' $n > "$2/launcher/hpclaunch"
  echo "[100%] Linking CXX executable hpclaunch"
else
  while [ $# -gt 0 ]; do [ "$1" = -B ] && { mkdir -p "$2"; : > "$2/CMakeCache.txt"; }; shift; done
fi
"""


def fake_repository(tmp_path):
    """python/'s files as git knows them, in a directory that setup.py takes for a repository to build in."""
    repo = tmp_path / "repo"
    files = subprocess.run(["git", "-C", SOURCE_DIR, "ls-files", "python"], capture_output=True, text=True,
                           check=True).stdout.split()
    for f in files:
        (repo / f).parent.mkdir(parents=True, exist_ok=True)
        shutil.copy2(os.path.join(SOURCE_DIR, f), repo / f)
    (repo / "CMakeLists.txt").write_text("# what setup.py looks for; the fake cmake builds\n")
    return repo


def wheel(tmp_path, env, n):
    out = tmp_path / f"dist{n}"
    p = subprocess.run([SYSTEM_PYTHON, "-m", "pip", "wheel", "--no-build-isolation", "--no-index", "--no-deps", "-v",
                        str(tmp_path / "repo" / "python"), "-w", str(out)], capture_output=True, text=True, env=env,
                       cwd=tmp_path)
    assert p.returncode == 0, p.stdout + p.stderr
    (whl,) = out.iterdir()
    with zipfile.ZipFile(whl) as z:
        return z.read("hpclaunch/bin/hpclaunch").decode(), p.stdout + p.stderr


def test_every_wheel_brings_the_static_build_up_to_date_and_shows_it(tmp_path):
    bin_dir = tmp_path / "bin"
    bin_dir.mkdir()
    (bin_dir / "cmake").write_text(FAKE_CMAKE)
    (bin_dir / "cmake").chmod(0o755)
    build = tmp_path / "build-static"
    calls = tmp_path / "calls"
    fake_repository(tmp_path)
    env = {k: v for k, v in os.environ.items() if k != "HPCLAUNCH_BINARY"}
    env.update(PATH=f"{bin_dir}:/usr/bin:/bin", HPCLAUNCH_STATIC_BUILD_DIR=str(build), FAKE_CMAKE_CALLS=str(calls),
               HOME=str(tmp_path))
    first, out = wheel(tmp_path, env, 1)
    assert first == "static hpclaunch, build 1\n"
    assert "[ 50%] Building CXX object" in out and "about 10 CPU-minutes" in out, out  # shown (pip -v), and logged
    assert "[100%] Linking CXX executable hpclaunch" in (build / "wheel-build.log").read_text()
    second, _ = wheel(tmp_path, env, 2)
    assert second == "static hpclaunch, build 2\n", "the second wheel shipped the first build's binary"
    lines = calls.read_text().splitlines()
    assert len([l for l in lines if l.startswith("-S")]) == 1, lines  # configured once
    assert len([l for l in lines if l.startswith("--build")]) == 2, lines  # built at every wheel


def test_a_python_without_wheel_gets_one_line_saying_what_it_needs(tmp_path):
    # As pyenv's python3 without `wheel` and with a setuptools older than 70.1: neither bdist_wheel imports.
    (tmp_path / "sitecustomize.py").write_text(
        "import sys\n"
        "class Block:\n"
        "    def find_spec(self, name, path=None, target=None):\n"
        "        if name in ('wheel', 'wheel.bdist_wheel', 'setuptools.command.bdist_wheel'):\n"
        "            raise ImportError('No module named ' + repr(name))\n"
        "sys.meta_path.insert(0, Block())\n")
    env = dict(os.environ, PYTHONPATH=str(tmp_path))
    p = subprocess.run([SYSTEM_PYTHON, "setup.py", "--name"], capture_output=True, text=True, env=env,
                       cwd=fake_repository(tmp_path) / "python")
    assert p.returncode != 0
    assert "Traceback" not in p.stderr, p.stderr
    lines = [l for l in p.stderr.splitlines() if l.strip()]
    assert len(lines) == 1 and lines[0].startswith("setup.py: error:") and "python3-wheel" in lines[0], p.stderr
