"""snarl in Jupyter: docs/examples/quickstart.ipynb runs in a fresh kernel without errors
and shows a report as HTML and figures as PNG images; a Report, the figures of
snarl.plots and the notebook progress bar display themselves through IPython's
formatters as a notebook would show them."""

from __future__ import annotations

import base64
import sys

import pytest

import snarl
from conftest import REPO, SMALL
from snarl import plots

NOTEBOOK = REPO / "docs" / "examples" / "quickstart.ipynb"
PNG_SIGNATURE = b"\x89PNG\r\n\x1a\n"


@pytest.fixture(scope="module")
def executed(tmp_path_factory):
    """The quickstart notebook executed by nbclient in a fresh kernel of this Python,
    from its own directory (as Jupyter runs it); the kernel's connection file, IPython's
    profile and the notebook's temporary files (its sweep) go to a temporary directory
    of the test session, and it keeps no history."""
    nbformat = pytest.importorskip("nbformat")
    nbclient = pytest.importorskip("nbclient")
    pytest.importorskip("ipykernel")
    notebook = nbformat.read(NOTEBOOK, as_version=4)
    home = tmp_path_factory.mktemp("jupyter")
    client = nbclient.NotebookClient(
        notebook,
        timeout=300,
        kernel_name="python3",
        extra_arguments=["--HistoryManager.enabled=False"],
        resources={"metadata": {"path": str(NOTEBOOK.parent)}},
    )
    (home / "tmp").mkdir()
    with pytest.MonkeyPatch.context() as patch:
        patch.setenv("JUPYTER_RUNTIME_DIR", str(home / "runtime"))
        patch.setenv("IPYTHONDIR", str(home / "ipython"))
        patch.setenv("TMPDIR", str(home / "tmp"))
        client.execute()
    assert len(list((home / "tmp").glob("snarl-quickstart-*/points/*.json"))) == 4
    return {cell.get("id"): cell for cell in notebook.cells}


def outputs(cell, output_type: str) -> list:
    return [o for o in cell.get("outputs", []) if o["output_type"] == output_type]


def png_of(output) -> bytes:
    data = base64.b64decode(output["data"]["image/png"])
    assert data.startswith(PNG_SIGNATURE)
    return data


def test_the_notebook_runs_without_errors(executed):
    for cell_id, cell in executed.items():
        if cell.cell_type != "code":
            continue
        assert not outputs(cell, "error"), (cell_id, outputs(cell, "error"))
        # Nothing on stderr either: no warning (rich's "install ipywidgets"), no traceback.
        streams = [o for o in outputs(cell, "stream") if o["name"] == "stderr"]
        assert not streams, (cell_id, streams)


def test_the_report_cell_shows_html(executed):
    (result,) = outputs(executed["report"], "execute_result")
    page = result["data"]["text/html"]
    assert '<div class="snarl-report">' in page
    for text in ("offered load", "accepted load", "latency p99 (cycles)", "uniform", "hotspot", "data:image/png;base64,"):
        assert text in page, text
    assert result["data"]["text/plain"].startswith("<snarl.Report")
    # progress=True drew its bar in the cell's output, finished.
    (bar,) = outputs(executed["report"], "display_data")
    assert '<div class="snarl-progress"' in bar["data"]["text/html"]


def test_the_progress_bar_ends_complete(executed):
    """The bar's display was updated in place (nbclient applies the updates to the
    saved output): its last state says the run is done, with the time it took."""
    (bar,) = outputs(executed["report"], "display_data")
    assert bar["data"]["text/plain"].startswith("simulated in 0:")


def test_the_plot_cells_show_png_images(executed):
    for cell_id in ("plot", "load-curve"):
        (result,) = outputs(executed[cell_id], "execute_result")
        assert len(png_of(result)) > 10_000, cell_id
        assert result["metadata"]["image/png"]["width"] > 300, cell_id


def test_the_sweep_returns_a_dataframe(executed):
    (result,) = outputs(executed["sweep"], "execute_result")
    page = result["data"]["text/html"]  # a DataFrame's table
    assert "point_id" in page and "groups.uniform.accepted_load" in page
    assert page.count(">ok<") == 4


# ----------------------------------------------------------------------------- in process


def formatted(obj) -> dict:
    """What IPython's display formatters give for ``obj``, as a notebook's kernel shows
    it (every format on, nothing registered for matplotlib)."""
    pytest.importorskip("IPython")
    from IPython.core.formatters import DisplayFormatter

    data, _ = DisplayFormatter().format(obj)
    return data


def test_a_report_displays_as_html(simulate):
    report = simulate(SMALL)
    data = formatted(report)
    assert "text/html" in data and data["text/html"] == report._repr_html_()
    assert "<img" in data["text/html"]


def test_a_figure_displays_as_png_without_pyplot():
    """A figure of snarl.plots shows itself in a fresh interpreter (no pyplot imported,
    no %matplotlib), and is not registered with pyplot."""
    fig = plots.cdf([1, 2, 3, 4])
    assert type(fig).__name__ == "SnarlFigure"
    if "matplotlib.pyplot" in sys.modules:
        import matplotlib.pyplot as plt

        assert all(plt.figure(n) is not fig for n in plt.get_fignums())
    data = formatted(fig)
    assert data["image/png"].startswith(PNG_SIGNATURE)


def test_figure_png_metadata():
    fig = plots.cdf([1, 2, 3, 4])
    data, size = fig._repr_png_()
    assert data.startswith(PNG_SIGNATURE)
    width, height = fig.get_size_inches()
    assert size == {"width": round(width * plots.NOTEBOOK_DPI), "height": round(height * plots.NOTEBOOK_DPI)}


def test_a_figure_pickles():
    import pickle

    fig = plots.cdf([1, 2, 3, 4])
    again = pickle.loads(pickle.dumps(fig))
    assert type(again) is plots.SnarlFigure


def test_outside_a_notebook_progress_true_draws_no_html(simulate, capsys):
    assert not snarl.api.in_notebook()
    simulate(SMALL, progress=True)
    assert "snarl-progress" not in capsys.readouterr().out


def test_notebook_progress_states(monkeypatch):
    """The bar's text as a run and a sweep move it."""
    pytest.importorskip("IPython")
    shown: list[dict] = []

    class Handle:
        def update(self, bundle, raw=False):
            shown.append(bundle)

    import IPython.display

    monkeypatch.setattr(IPython.display, "display", lambda bundle, raw, display_id: shown.append(bundle) or Handle())
    monkeypatch.setattr(snarl.api, "in_notebook", lambda: True)
    bar = snarl.api.NotebookProgress("simulating", done="simulated", interval=0)
    bar.update(0.5)
    assert shown[-1]["text/plain"].startswith("simulating 50% · elapsed 0:00:00")
    assert '<progress value="0.5000" max="1"' in shown[-1]["text/html"]
    bar.update(1.0)
    bar.close()
    assert shown[-1]["text/plain"].startswith("simulated in 0:00:00")
    assert "<progress" not in shown[-1]["text/html"]

    sweep = snarl.api.NotebookProgress("sweep", total=None, unit="points", interval=0)
    assert shown[-1]["text/plain"].startswith("sweep: 0 points done, 0 failed · elapsed 0:00:00")  # the total not yet known
    sweep(3, 1, 4)  # a sweep's callback: (done, failed, total)
    assert shown[-1]["text/plain"].startswith("sweep: 3/4 points done, 1 failed · elapsed")
    sweep.close()
    assert shown[-1]["text/plain"].endswith("(stopped)")
    sweep = snarl.api.NotebookProgress("sweep", total=2, unit="points", interval=0)
    sweep(2, 0, 2)
    assert shown[-1]["text/plain"] == "sweep: done in 0:00:00 (2/2 points done, 0 failed)"


def test_outside_a_notebook_the_bar_draws_nothing(capsys):
    bar = snarl.api.NotebookProgress("simulating")
    bar.update(0.5)
    bar.close()
    assert capsys.readouterr() == ("", "")


def test_in_notebook_is_false_in_a_terminal_ipython(monkeypatch):
    IPython = pytest.importorskip("IPython")

    class TerminalInteractiveShell:
        pass

    monkeypatch.setattr(IPython, "get_ipython", lambda: TerminalInteractiveShell())
    assert not snarl.api.in_notebook()

    class ZMQInteractiveShell:
        pass

    monkeypatch.setattr(IPython, "get_ipython", lambda: ZMQInteractiveShell())
    assert snarl.api.in_notebook()
