"""Puts the static hpclaunch binary into the wheel (as hpclaunch/bin/hpclaunch) and tags the wheel for this
machine's architecture (the binary is the only platform-specific part; the Python code is for any Python >= 3.9).

The binary: $HPCLAUNCH_BINARY when set, else the static build in BUILD-static/ of this repository (the directory
tests/integration/t0720-static.sh uses), brought up to date with the source at every wheel: configured there with
-DHPCLAUNCH_STATIC=ON the first time (docs/install.md, "The static binary": about 10 CPU-minutes), then rebuilt
incrementally (seconds when nothing changed; a new commit rebuilds what --version names). Its progress goes to the
terminal (pip hides a build's output) and to BUILD-static/wheel-build.log."""
import os
import platform
import re
import shutil
import subprocess
import sys

from setuptools import Distribution, setup
from setuptools.command.build_py import build_py

try:  # setuptools >= 70.1 has its own (pip's build isolation brings the newest; wheel's then warns it is old)
    from setuptools.command.bdist_wheel import bdist_wheel
except ImportError:
    try:
        from wheel.bdist_wheel import bdist_wheel
    except ImportError:
        raise SystemExit(f"setup.py: error: {sys.executable} has neither the `wheel` package nor a setuptools with "
                         "bdist_wheel (70.1 or later); fix: use Debian's /usr/bin/python3 with python3-wheel and "
                         "python3-setuptools (docs/python.md), or install `wheel` into this Python") from None

HERE = os.path.dirname(os.path.abspath(__file__))
REPO = os.path.dirname(HERE)


def static_binary():
    given = os.environ.get("HPCLAUNCH_BINARY")
    if given:
        if not os.path.isfile(given):
            raise SystemExit(f"setup.py: error: HPCLAUNCH_BINARY is '{given}', which is not a file; "
                             "fix: point it at a static hpclaunch (cmake -DHPCLAUNCH_STATIC=ON)")
        return given
    build = os.environ.get("HPCLAUNCH_STATIC_BUILD_DIR", os.path.join(REPO, "build-static"))
    binary = os.path.join(build, "launcher", "hpclaunch")
    if not os.path.isfile(os.path.join(REPO, "CMakeLists.txt")):
        if os.path.isfile(binary):
            return binary
        raise SystemExit("setup.py: error: no hpclaunch binary to put in the wheel and no repository to build one "
                         "in; fix: set HPCLAUNCH_BINARY=/path/to/a/static/hpclaunch")
    os.makedirs(build, exist_ok=True)
    log = os.path.join(build, "wheel-build.log")
    with open(log, "w") as out, Progress() as progress:
        first = not os.path.isfile(os.path.join(build, "CMakeCache.txt"))
        progress.say(f"setup.py: {'building' if first else 'bringing up to date'} the static hpclaunch in {build}"
                     f"{' (the first time: about 10 CPU-minutes)' if first else ''}; its log: {log}")
        if first:
            run_logged(["cmake", "-S", REPO, "-B", build, "-DCMAKE_BUILD_TYPE=Release", "-DHPCLAUNCH_STATIC=ON",
                        "-DHPCLAUNCH_BUILD_TESTS=OFF"], out, progress)
        run_logged(["cmake", "--build", build, "-j", str(os.cpu_count() or 1), "--target", "hpclaunch"], out,
                   progress)
        progress.say(f"setup.py: {binary} is up to date")
    return binary


class Progress:
    """Where a long build's progress goes: the terminal when there is one (pip captures our output and shows a
    spinner), else stderr (pip -v shows it)."""

    def __enter__(self):
        try:
            self.out = open("/dev/tty", "w")
        except OSError:
            self.out = None
        return self

    def say(self, line):
        for f in (self.out, sys.stderr):
            if f is not None:
                print(line, file=f, flush=True)

    def __exit__(self, *exc):
        if self.out is not None:
            self.out.close()


def run_logged(argv, out, progress):
    # cmake's "[ 42%] Building CXX object ..." lines are the progress; everything goes to the log.
    p = subprocess.Popen(argv, stdout=subprocess.PIPE, stderr=subprocess.STDOUT, text=True)
    last = []
    for line in p.stdout:
        out.write(line)
        out.flush()
        last = (last + [line.rstrip()])[-20:]
        if re.match(r"^\[ *\d+(%|/\d+)\]", line):  # Makefiles: [ 42%]; Ninja: [12/200]
            progress.say("setup.py: " + line.rstrip())
    if p.wait() != 0:
        raise SystemExit(f"setup.py: error: `{' '.join(argv)}` failed (exit {p.returncode}); its last lines:\n"
                         + "\n".join(last) + f"\nfix: see {out.name}")


def is_static(path):
    # A dynamic executable names its loader (PT_INTERP, /lib64/ld-linux-x86-64.so.2) near its start.
    with open(path, "rb") as f:
        return b"/ld-linux" not in f.read(8192)


class BuildWithBinary(build_py):
    def run(self):
        super().run()
        source = static_binary()
        target_dir = os.path.join(self.build_lib, "hpclaunch", "bin")
        os.makedirs(target_dir, exist_ok=True)
        target = os.path.join(target_dir, "hpclaunch")
        shutil.copyfile(source, target)
        os.chmod(target, 0o755)
        self.distribution.hpclaunch_static = is_static(source)


class BinaryDistribution(Distribution):
    # Not pure Python: installed to platlib, and the wheel's root is not purelib.
    def has_ext_modules(self):
        return True


class PlatformWheel(bdist_wheel):
    def get_tag(self):
        machine = platform.machine()
        # A static binary needs no particular glibc: manylinux2014 (glibc 2.17) is honest for it; a dynamic one
        # runs only where it was built.
        static = getattr(self.distribution, "hpclaunch_static", True)
        plat = f"manylinux2014_{machine}" if static else f"linux_{machine}"
        return "py3", "none", plat


setup(distclass=BinaryDistribution, cmdclass={"build_py": BuildWithBinary, "bdist_wheel": PlatformWheel})
