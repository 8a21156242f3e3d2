"""The HTML report (issue 15): one self-contained page (no <script src>, no <link>: plotly's JavaScript and
the animation frames are inside), long series decimated but never truncated (the min/max envelope keeps
every bucket's extremes and the whole time span), the events table, uniqueness flags and `run --report`."""
import re

import numpy as np
import pytest
from click.testing import CliRunner

from multibody import RunOptions, simulate
from multibody.cli import main
from multibody.models import MODELS
from multibody.report.figures import envelope, reaction_columns
from multibody.report.page import report_html

pytestmark = pytest.mark.filterwarnings("ignore:Animation was deleted")


def test_envelope_keeps_extremes_and_span(rng):
    t = np.linspace(0.0, 20.0, 100_001)
    y = np.column_stack([np.sin(t), rng.normal(size=t.size)])
    y[77_777, 0] = 50.0                                 # one spike between display points
    for j, idx in enumerate(envelope(y, 600)):
        assert len(idx) <= 602 and idx[0] == 0 and idx[-1] == len(t) - 1
        assert y[idx, j].max() == y[:, j].max() and y[idx, j].min() == y[:, j].min()
    assert np.array_equal(envelope(y[:10], 600)[0], np.arange(10))


def test_reaction_columns_take_the_second_body():
    labels = [f"O1.on_{b}.{c}" for b in ("ground", "bar1") for c in ("Fx", "Fy", "Mz", "Fx_body", "Fy_body")]
    assert [labels[j] for j in reaction_columns(labels)] == ["O1.on_bar1.Fx", "O1.on_bar1.Fy", "O1.on_bar1.Mz"]


@pytest.fixture(scope="module")
def locking():
    entry = MODELS["three-r-pendulum-locking"]
    return simulate(entry.factory(), t_end=2.0, options=RunOptions(output_step=0.01), events=entry.events)


def test_page_is_self_contained_with_events(locking):
    page = report_html(locking, "<img src='data:image/png;base64,AAAA'>")
    assert not re.search(r"<script[^>]*\bsrc=|<link\b", page)          # nothing loaded from elsewhere
    assert page.count("<div class='figure plot'") >= 5
    for e in locking.events:                            # both locks with the energy before and after
        assert e["name"] in page
        assert f"{e['energy_before']:.6g}" in page and f"{e['energy_after']:.6g}" in page
    assert "not unique (paper 003" in page


def test_run_with_report(tmp_path):
    out = tmp_path / "r.html"
    res = CliRunner().invoke(main, ["run", "four-bar", "--t-end", "0.3", "--out", str(tmp_path / "p.h5"),
                                    "--report", str(out)])
    assert res.exit_code == 0, res.output
    assert f"wrote {out}" in res.output
    text = out.read_text()
    assert "four-bar: multibody run report" in text and "data:image/png;base64" in text
    res = CliRunner().invoke(main, ["run", "pendulum", "--t-end", "0.3", "--out", str(tmp_path / "q.h5")])
    res = CliRunner().invoke(main, ["report", str(tmp_path / "q.h5"), "-o", str(tmp_path / "q.html")])
    assert res.exit_code == 0                           # a model without geometry: a report, no animation
    assert "has nothing to draw" in (tmp_path / "q.html").read_text()


@pytest.mark.parametrize("args, words", [
    (["report", "missing.h5", "-o", "r.html"], "does not exist"),
    (["report", "missing.h5", "-o", "r.pdf"], "must end in .html"),
    (["run", "pendulum", "--report", "r.txt"], "must end in .html"),
    (["run", "pendulum", "--report", "afile/r.html"], "is a file, not a directory"),
])
def test_report_bad_input(tmp_path, monkeypatch, args, words):
    monkeypatch.chdir(tmp_path)
    (tmp_path / "afile").write_text("")                 # a regular file where a directory is needed
    res = CliRunner().invoke(main, args)
    assert res.exit_code == 2 and words in res.output and "Traceback" not in res.output
    assert [p.name for p in tmp_path.iterdir()] == ["afile"]    # nothing written, not even the result


def test_report_without_plotly_names_the_extra(tmp_path, monkeypatch):
    import builtins

    real = builtins.__import__
    monkeypatch.setattr(builtins, "__import__", lambda name, *a, **k: (_ for _ in ()).throw(ImportError(name))
                        if name.startswith("plotly") else real(name, *a, **k))
    res = CliRunner().invoke(main, ["run", "pendulum", "--report", str(tmp_path / "r.html")])
    assert res.exit_code == 2 and "multibody[report]" in res.output


def test_analyze_html_draws_the_admissible_motions(tmp_path):
    """Double four-bar at its singular configuration (paper 000 Sect. 3.2: all bars horizontal): n 15, m 14,
    rank 12, so 15 - 12 = 3 admissible motions, each drawn on the mechanism; 14 - 12 = 2 redundant rows."""
    out = tmp_path / "a.html"
    res = CliRunner().invoke(main, ["analyze", "double-four-bar", "--configuration", "singular", "--html", str(out)])
    assert res.exit_code == 0, res.output
    page = out.read_text()
    assert "<td>rank</td><td>12</td>" in page and "<td>redundancy</td><td>2</td>" in page
    assert page.count("<svg") == 3 and page.count("admissible motion T") == 3
    assert not re.search(r"<script[^>]*\bsrc=|<link\b|<img[^>]*src=.http", page)     # nothing fetched


def test_criterion_html_table_and_figure(tmp_path):
    out = tmp_path / "c.html"
    res = CliRunner().invoke(main, ["criterion", "four-bar-relative", "--sweep", "alpha1", "0", "3.1416", "5",
                                    "--html", str(out)])
    assert res.exit_code == 0, res.output
    page = out.read_text()
    assert page.count("<tr>") == 1 + 5 and "data:image/png;base64," in page       # header + 5 sweep points


@pytest.mark.parametrize("command", [["analyze", "four-bar"], ["criterion", "four-bar"]])
def test_findings_html_bad_path(tmp_path, command):
    res = CliRunner().invoke(main, [*command, "--html", str(tmp_path / "x.pdf")])
    assert res.exit_code == 2 and "must end in .html" in res.output


def test_energy_balance_of_a_driven_run():
    """The driven slider-crank gains the work its driver does (simulation.work): E(t) - E(0) - W(t) = 0 up to
    the integration error, while E(t) - E(0) itself is not small."""
    from multibody.report.figures import energy_balance

    result = simulate(MODELS["slider-crank"].factory(), t_end=1.0, options=RunOptions(rtol=1e-9, atol=1e-11))
    balance, label = energy_balance(result)
    e = result["energy"][:, 2]
    assert "W(t)" in label and np.ptp(e) > 0.1 * np.abs(result["energy"]).max()
    assert np.abs(balance).max() < 1e-5 * np.abs(result["energy"]).max()


def test_nullspace_crossings_listed_once_with_their_motions_drawn():
    """A nullspace run of the double four-bar finds each singular configuration twice (its own event and the
    crossing monitor of issue 12): one row each. There n - rank = 15 - 12 = 3 admissible motions (paper 000
    Sect. 3.2): the continuing one and 2 new ones, each drawn on the mechanism."""
    model = MODELS["double-four-bar"].factory()
    result = simulate(model, t_end=1.5, formulation="nullspace", options=RunOptions(output_step=0.05))
    page = report_html(result, None, "", model)
    events = page[page.index("<h3>Singular crossings"):page.index("<h3>Locks")]
    assert events.count("<td>12</td><td>14</td><td>2</td>") == 2          # 0.714 s and 1.228 s, once each
    assert page.count("continuing motion 1") == 2 and page.count("new motion 2") == 2
    assert events.count("<svg") == 2 * 3
