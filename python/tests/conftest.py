"""Shared by the tests of the Python package (run by tests/integration/t08*-python-*.sh under CTest, which set
HPCLAUNCH to the built binary, and XDG_STATE_HOME/XDG_CONFIG_HOME/TMPDIR to the test's own directory)."""
import json
import os
import subprocess
import sys
import time

import pytest

HERE = os.path.dirname(os.path.abspath(__file__))
sys.path.insert(0, os.path.dirname(HERE))  # the package from the source tree

SOURCE_DIR = os.environ.get("HPCLAUNCH_SOURCE_DIR", os.path.dirname(os.path.dirname(HERE)))


@pytest.fixture
def workdir(tmp_path, monkeypatch):
    """A directory of the test's own as the working directory (job directories go under it) with its own job
    index and user profiles."""
    monkeypatch.chdir(tmp_path)
    monkeypatch.setenv("XDG_STATE_HOME", str(tmp_path / "xdg-state"))
    monkeypatch.setenv("XDG_CONFIG_HOME", str(tmp_path / "xdg-config"))
    os.chmod(tmp_path, 0o755)
    return tmp_path


def cli(*args, check=True):
    """The binary itself, for comparing with what the API says."""
    from hpclaunch import binary

    p = subprocess.run([binary()] + list(args), capture_output=True, text=True)
    if check and p.returncode != 0:
        raise AssertionError(f"hpclaunch {' '.join(args)} exited {p.returncode}: {p.stderr}")
    return p


def cli_json(*args):
    p = cli(*args)
    lines = p.stdout.splitlines()
    assert len(lines) == 1, f"--json printed {len(lines)} lines on stdout: {p.stdout!r}"
    return json.loads(lines[0])


def wait_for_file(path, timeout=120.0):
    """Waits until `path` exists (a job's sign that it runs); fails the test when it does not within `timeout` s."""
    deadline = time.monotonic() + timeout
    while not os.path.exists(path):
        assert time.monotonic() < deadline, f"{path} did not appear within {timeout} s: the job never started"
        time.sleep(0.1)
