"""Puts the static hpclaunch binary into the wheel (as hpclaunch/bin/hpclaunch) and tags the wheel for this
machine's architecture (the binary is the only platform-specific part; the Python code is for any Python >= 3.9).

The binary: $HPCLAUNCH_BINARY when set, else BUILD-static/launcher/hpclaunch of this repository (the directory the
static build of tests/integration/t0720-static.sh uses), else it is built there with -DHPCLAUNCH_STATIC=ON
(docs/install.md, "The static binary": minutes on 2 cores)."""
import os
import platform
import shutil
import subprocess

from setuptools import Distribution, setup
from setuptools.command.build_py import build_py

try:
    from wheel.bdist_wheel import bdist_wheel
except ImportError:  # setuptools >= 70 has its own
    from setuptools.command.bdist_wheel import bdist_wheel

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
    if os.path.isfile(binary):
        return binary
    if not os.path.isfile(os.path.join(REPO, "CMakeLists.txt")):
        raise SystemExit("setup.py: error: no hpclaunch binary to put in the wheel and no repository to build one "
                         "in; fix: set HPCLAUNCH_BINARY=/path/to/a/static/hpclaunch")
    print(f"setup.py: building the static hpclaunch in {build} (docs/install.md, 'The static binary')")
    subprocess.check_call(["cmake", "-S", REPO, "-B", build, "-DCMAKE_BUILD_TYPE=Release", "-DHPCLAUNCH_STATIC=ON",
                           "-DHPCLAUNCH_BUILD_TESTS=OFF"])
    subprocess.check_call(["cmake", "--build", build, "-j", str(os.cpu_count() or 1), "--target", "hpclaunch"])
    return binary


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
