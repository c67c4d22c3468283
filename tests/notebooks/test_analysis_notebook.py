"""notebooks/analysis.ipynb runs top to bottom in a real kernel and shows its figures."""

from __future__ import annotations

import sys
from pathlib import Path

import nbformat
import pytest
from nbclient import NotebookClient

NOTEBOOK = Path(__file__).resolve().parents[2] / "notebooks" / "analysis.ipynb"


def _kernel_for_this_python(tmp_path: Path, monkeypatch) -> str:
    """Install a ``python3`` kernelspec for this interpreter and put it first on JUPYTER_PATH.

    A ``python3`` spec found elsewhere might start another Python without llm_aai; a fresh
    one pointing at ``sys.executable`` makes the test independent of the machine's Jupyter.
    """
    from ipykernel.kernelspec import install

    prefix = tmp_path / "jupyter"
    install(prefix=str(prefix), kernel_name="python3")
    monkeypatch.setenv("JUPYTER_PATH", str(prefix / "share" / "jupyter"))
    from jupyter_client.kernelspec import KernelSpecManager

    assert KernelSpecManager().get_kernel_spec("python3").argv[0] == sys.executable
    return "python3"


def _outputs(notebook):
    return [out for cell in notebook.cells if cell.cell_type == "code" for out in cell.outputs]


@pytest.mark.slow
def test_notebook_runs_and_shows_table_plot_and_replay(testbed_dir, tmp_path, monkeypatch):
    monkeypatch.setenv("LLM_AAI_ARENAS", str(testbed_dir))
    monkeypatch.setenv("TMPDIR", str(tmp_path))  # the demo run's temporary folder lands here
    notebook = nbformat.read(NOTEBOOK, as_version=4)
    code = "\n".join(cell.source for cell in notebook.cells if cell.cell_type == "code")
    assert "def " not in code and "class " not in code  # the notebook only calls the library
    kernel = _kernel_for_this_python(tmp_path, monkeypatch)
    client = NotebookClient(notebook, kernel_name=kernel, timeout=600,
                            resources={"metadata": {"path": str(tmp_path)}})
    client.execute()  # raises CellExecutionError on the first failing cell

    outputs = _outputs(notebook)
    assert not [out for out in outputs if out.output_type == "error"]
    images = [out for out in outputs if "image/png" in out.get("data", {})]
    assert len(images) >= 4  # the comparison figure and three replay frames
    text = "\n".join(out.get("text", "") for out in outputs if out.output_type == "stream")
    assert "Food Retrieval" in text and "Children 6-10" in text  # the level table
    assert "verdict: MATCH" in text
    tables = [out for out in outputs if "text/html" in out.get("data", {})]
    assert tables and "heuristic" in tables[0]["data"]["text/html"]
