"""The example notebook executes and writes its figure, so it cannot rot (issue 13, point 4)."""

from pathlib import Path

import nbformat
from nbclient import NotebookClient

NOTEBOOK = Path(__file__).resolve().parents[2] / "examples" / "notebooks" / "tfrc-vs-tcp.ipynb"


def test_notebook_runs_and_writes_its_figure(tmp_path, monkeypatch):
    monkeypatch.setenv("TFRCLAB_NOTEBOOK_OUT", str(tmp_path))
    nb = nbformat.read(NOTEBOOK, as_version=4)
    # Raises CellExecutionError, naming the cell, if any cell fails.
    NotebookClient(nb, timeout=600, kernel_name="python3", resources={"metadata": {"path": str(NOTEBOOK.parent)}}).execute()
    figure = tmp_path / "tfrc-vs-tcp.png"
    assert figure.is_file()
    assert figure.read_bytes()[:8] == b"\x89PNG\r\n\x1a\n"
    # The friendliness table has one row per swept delay, each from 4 seeds.
    cell = next(c for c in nb.cells if c.cell_type == "code" and "friendly[[" in c.source)
    table = next(o for o in cell.outputs if o.output_type == "execute_result")
    text = table["data"]["text/plain"]
    assert len([line for line in text.splitlines()[1:] if line.strip()]) == 4
