"""The wheel: built from a clean copy of python/ with Debian's setuptools and wheel, offline; installed into a
fresh venv with no network; `hpclaunch --version` and `import hpclaunch` work there, from the binary it carries.
And pip's usual way, as users build it: `pip wheel .` and `pip install .` with build isolation (setuptools and
wheel from PyPI). HPCLAUNCH_BINARY names the static hpclaunch to put in (t0810 passes the static build's)."""
import os
import re
import shutil
import stat
import subprocess
import zipfile

import pytest

from conftest import SOURCE_DIR

SYSTEM_PYTHON = "/usr/bin/python3"  # Debian's, with python3-setuptools and python3-wheel


def offline(argv, **kw):
    """argv with no network: in a network namespace of its own when we may make one (root), as CI runs."""
    if shutil.which("unshare") and os.geteuid() == 0:
        argv = ["unshare", "--net"] + argv
    return subprocess.run(argv, capture_output=True, text=True, **kw)


def static_binary():
    binary = os.environ.get("HPCLAUNCH_BINARY")
    assert binary and os.path.isfile(binary), "set HPCLAUNCH_BINARY to the static hpclaunch"
    return binary


def clean_tree(tmp_path):
    """python/'s files as git knows them, nothing built, under tmp_path/src."""
    files = subprocess.run(["git", "-C", SOURCE_DIR, "ls-files", "python"], capture_output=True, text=True,
                           check=True).stdout.split()
    assert "python/setup.py" in files
    src = tmp_path / "src"
    for f in files:
        (src / f).parent.mkdir(parents=True, exist_ok=True)
        shutil.copy2(os.path.join(SOURCE_DIR, f), src / f)
    return src


def installing_block(n):
    """docs/python.md's n-th ```sh block of "Installing", to run line by line as written there."""
    with open(os.path.join(SOURCE_DIR, "docs", "python.md")) as f:
        section = re.search(r"## Installing(.*?)\n## ", f.read(), re.S).group(1)
    return re.findall(r"```sh\n(.*?)```", section, re.S)[n]


def wheel_tag():
    return f"py3-none-manylinux2014_{os.uname().machine}"


def test_wheel_from_a_clean_tree_into_a_fresh_venv(tmp_path):
    binary = static_binary()
    src = clean_tree(tmp_path)
    block = installing_block(0)
    home = tmp_path / "home"
    home.mkdir()
    env = {"PATH": "/usr/bin:/bin", "HOME": str(home), "HPCLAUNCH_BINARY": binary}
    p = offline(["bash", "-euxc", block], env=env, cwd=src)
    assert p.returncode == 0, p.stdout + p.stderr
    assert "hpclaunch 0.1.0" in p.stdout
    wheels = os.listdir(src / "dist")
    assert wheels == [f"hpclaunch-0.1.0-{wheel_tag()}.whl"], wheels
    wheel = src / "dist" / wheels[0]
    with zipfile.ZipFile(wheel) as z:
        info = z.getinfo("hpclaunch/bin/hpclaunch")
        assert (info.external_attr >> 16) & stat.S_IXUSR, "the binary is not executable in the wheel"
        assert info.file_size == os.path.getsize(binary)
        assert "Root-Is-Purelib: false" in z.read("hpclaunch-0.1.0.dist-info/WHEEL").decode()
    here = home / "venvs" / "here" / "bin" / "hpclaunch"  # pip install ./python's
    p = offline([str(here), "--version"], env=env)
    assert p.returncode == 0 and p.stdout.startswith("hpclaunch 0.1.0"), p.stdout + p.stderr
    venv = home / "venvs" / "train"
    # From elsewhere, with nothing of the build on PATH and no HPCLAUNCH: the venv's own command and module.
    env = {"PATH": f"{venv}/bin:/usr/bin:/bin", "HOME": str(tmp_path), "XDG_STATE_HOME": str(tmp_path / "state"),
           "XDG_CONFIG_HOME": str(tmp_path / "config")}
    p = offline(["hpclaunch", "--version"], env=env, cwd=tmp_path)
    assert p.returncode == 0 and p.stdout.startswith("hpclaunch 0.1.0"), p.stdout + p.stderr
    p = offline(["python", "-c", "import hpclaunch, os; b = hpclaunch.binary(); print(b); "
                 "print([s['name'] for s in hpclaunch.sites()][:50])"], env=env, cwd=tmp_path)
    assert p.returncode == 0, p.stderr
    where, names = p.stdout.splitlines()
    assert where.startswith(str(venv)) and where.endswith("hpclaunch/bin/hpclaunch")
    assert "perlmutter" in names
    p = offline(["python", "-m", "hpclaunch", "render", "--site", "perlmutter", "-A", "m1_g", "--", "python", "t.py"],
                env=env, cwd=tmp_path)
    assert p.returncode == 0 and "#SBATCH --account=m1_g" in p.stdout, p.stderr


def test_pip_wheel_and_pip_install_with_build_isolation(tmp_path):
    """Needs PyPI (pip fetches setuptools and wheel into its isolated build environment)."""
    binary = static_binary()
    src = clean_tree(tmp_path)
    home = tmp_path / "home"
    home.mkdir()
    env = {"PATH": "/usr/bin:/bin", "HOME": str(home), "HPCLAUNCH_BINARY": binary, "PIP_VERBOSE": "1",
           "PIP_NO_CACHE_DIR": "1", "PIP_DISABLE_PIP_VERSION_CHECK": "1"}
    p = subprocess.run(["bash", "-euxc", installing_block(1)], env=env, cwd=src, capture_output=True, text=True)
    out = p.stdout + p.stderr
    assert p.returncode == 0, out
    assert "pip-build-env" in out, "pip did not build in an isolated environment:\n" + out
    # Every warning of the build is news to a user (pip -v shows them): none.
    assert "Warning:" not in out, out
    assert os.listdir(src / "python" / "dist") == [f"hpclaunch-0.1.0-{wheel_tag()}.whl"]
    assert re.search(r"^hpclaunch 0\.1\.0", p.stdout, re.M), out
    import_check = [str(home / "venvs" / "any" / "bin" / "python"), "-c", "import hpclaunch; print(hpclaunch.binary())"]
    where = subprocess.run(import_check, env=env, cwd=tmp_path, capture_output=True, text=True, check=True).stdout
    assert where.startswith(str(home / "venvs" / "any")), where
