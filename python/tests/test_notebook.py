"""examples/executor.ipynb, executed headless as a user's Jupyter would run it (nbclient with Debian's python3
kernel, python3-ipykernel): every cell runs without an error and shows what its text promises."""
import os

import pytest

from conftest import SOURCE_DIR


def test_the_example_notebook_runs_headless(workdir, monkeypatch):
    try:
        import nbformat
        from nbclient import NotebookClient
    except ImportError:
        pytest.fail("python3-nbclient or python3-nbformat missing; run scripts/install-deps.sh")
    # The kernel is another process: the package from the source tree, and the binary the tests use.
    package = os.path.dirname(os.path.dirname(os.path.abspath(__file__)))
    monkeypatch.setenv("PYDEVD_DISABLE_FILE_VALIDATION", "1")  # ipykernel's debugger's notice on stderr
    monkeypatch.setenv("PYTHONPATH", os.pathsep.join([package] + [p for p in os.environ.get("PYTHONPATH", "").split(
        os.pathsep) if p]))
    with open(os.path.join(SOURCE_DIR, "examples", "executor.ipynb")) as f:
        nb = nbformat.read(f, as_version=4)
    NotebookClient(nb, timeout=300, kernel_name="python3", resources={"metadata": {"path": str(workdir)}}).execute()
    shown = []
    for cell in nb.cells:
        if cell.cell_type != "code":
            continue
        text = ""
        for out in cell.outputs:
            assert out.output_type != "error", out
            text += out.get("text", "") + out.get("data", {}).get("text/plain", "")
        shown.append(text)
    assert shown[0].startswith("['") and len(shown[0].split(",")) == 4, shown[0]  # four site names
    assert shown[1].startswith("#SBATCH"), shown[1]
    assert "'rank': 1" in shown[2] and "'value': 20" in shown[2], shown[2]
    assert shown[3].strip() == "[4, 9, 16]", shown[3]
    assert shown[4].strip().endswith("'completed'") and "Warning" not in shown[4], shown[4]
    assert "(5, 0.2)" in shown[5], shown[5]
