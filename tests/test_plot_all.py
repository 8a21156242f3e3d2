"""`multibody run MODEL --plot DIR` for every built-in model (issue 13 item 5): no traceback, PNG files,
and every 2-D panel of every figure has both axis labels and a title (its own or the figure's)."""
import pytest
from click.testing import CliRunner

from multibody.cli import main
from multibody.models import MODELS
from multibody.plot import common


@pytest.fixture
def figures(monkeypatch):
    seen = []
    save = common._save

    def check(fig, path):
        for ax in fig.axes:
            if not ax.get_visible() or ax.name == "3d" or not ax.has_data():
                continue
            # a panel sharing its x axis with a labelled one (stacked panels) needs no label of its own
            xlabel = ax.get_xlabel() or next((a.get_xlabel() for a in ax.get_shared_x_axes().get_siblings(ax)
                                              if a.get_xlabel()), "")
            seen.append((path, xlabel, ax.get_ylabel(), ax.get_title() or fig._suptitle is not None))
        return save(fig, path)

    monkeypatch.setattr(common, "_save", check)
    monkeypatch.setattr("multibody.cli.run.PLOT_STATES", 40)     # fewer stored states: a fast test
    for module in ("standard", "spatial", "topology", "physical", "admissible", "nullspace"):
        mod = __import__(f"multibody.plot.{module}", fromlist=["_save"])
        if hasattr(mod, "_save"):
            monkeypatch.setattr(mod, "_save", check)
    return seen


@pytest.mark.parametrize("name", sorted(MODELS))
def test_plot_every_model(name, tmp_path, figures):
    t_end = min(MODELS[name].t_end, 0.05)
    res = CliRunner().invoke(main, ["run", name, "--t-end", str(t_end), "--plot", str(tmp_path / "fig"),
                                    "--out", str(tmp_path / "r.h5")])
    assert res.exit_code == 0, res.output
    pngs = list((tmp_path / "fig").glob("*.png"))
    assert len(pngs) >= 3 and all(p.read_bytes()[:4] == b"\x89PNG" for p in pngs)
    assert figures, "no figure went through _save"
    for path, xlabel, ylabel, titled in figures:
        assert xlabel and ylabel and titled, f"{path.name}: unlabelled axes ({xlabel!r}, {ylabel!r})"
