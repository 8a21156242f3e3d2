"""The criterion by which benchmarks/singular_matrix.py judges a cell (issue 12, benchmarks/singular_yardstick.py):
the yardstick is the envelope of the reduced runs over the tolerances within 10^(3/8) of the requested one, errors
are compared as phase angles on the unit circle, and a cell passes iff it finished on its branch with every crossing
and its tip phase is within the yardstick's. Synthetic rows and synthetic reduced errors: no run of the library."""
from __future__ import annotations

import csv
import math
import sys
from pathlib import Path

import numpy as np
import pytest

sys.path.insert(0, str(Path(__file__).resolve().parents[1] / "benchmarks"))
import singular_matrix as sm  # noqa: E402
import singular_yardstick as ys  # noqa: E402


def _row(**kw):
    base = dict(model="double-four-bar", formulation="lagrange", integrator="dopri5", rtol="1e-06", atol="1e-08",
                step="", status="ok", crank_spread_rad="3.6e-15", tip_error_m="8.00e-04", crossings="10",
                crossings_expected="10", blas_kernel="default", message="", tip_ratio="0.8",
                reduced_envelope_m="1.00e-03", crossings_own="10")
    return {**base, **kw}


def test_scaled_tolerances_lie_on_the_eighth_decade_grid():
    assert ys.scaled(1e-4, 8) == 1e-3 and ys.scaled(1e-4, -8) == 1e-5
    assert ys.scaled(1e-4, 3) == pytest.approx(1e-4 * 10 ** 0.375, rel=1e-15)
    assert ys.scaled(3e-7, 1) == pytest.approx(3e-7 * 10 ** 0.125, rel=1e-15)      # off the grid: scaled


def test_envelope_is_the_largest_reduced_error_over_the_neighbourhood():
    """Tolerance proportionality E = C Tol with one lucky tolerance (E 100 times smaller exactly at the requested
    one): the envelope is C Tol 10^(3/8), the neighbourhood's largest, whatever the lucky value; rtol and atol are
    scaled together (their ratio, 1/100, is kept) over 2 REACH + 1 = 7 tolerances."""
    calls = []

    def reduced(cells, t_end, integrator, rtol, atol):
        calls.append((rtol, atol))
        return 1e3 * rtol * (0.01 if math.isclose(rtol, 1e-4) else 1.0)

    assert ys.envelope(2, 10.0, "dopri5", 1e-4, 1e-6, reduced=reduced) == pytest.approx(1e3 * 1e-4 * 10 ** 0.375)
    assert len(calls) == 2 * ys.REACH + 1 == 7
    assert all(math.isclose(a / r, 1e-2) for r, a in calls)
    assert min(r for r, _ in calls) == pytest.approx(1e-4 / 10 ** 0.375)


def test_phase_of_a_chord_on_the_unit_circle():
    assert ys.phase(0.0) == 0.0
    assert ys.phase(1.0) == pytest.approx(math.pi / 3)            # a chord equal to the radius: 60 degrees
    assert ys.phase(math.sqrt(2.0)) == pytest.approx(math.pi / 2)
    assert ys.phase(2.0) == pytest.approx(math.pi) and ys.phase(2.5) == pytest.approx(math.pi)   # saturated
    assert ys.phase(1e-8) == pytest.approx(1e-8, rel=1e-12)       # small errors: the chord itself


def test_tip_ratio_compares_phases():
    assert ys.tip_ratio(1.0, math.sqrt(2.0)) == pytest.approx(2.0 / 3.0)
    assert ys.tip_ratio(2.0, 2.0) == 1.0                          # both phases lost: consistent
    assert ys.tip_ratio(0.0, 0.0) == 0.0 and ys.tip_ratio(1e-9, 0.0) == math.inf


def test_verdict_of_synthetic_rows():
    assert ys.verdict(_row()) == []
    assert ys.verdict(_row(tip_ratio="1")) == []                                       # the bound itself passes
    assert ys.verdict(_row(status="n/a")) is None
    assert "x1.1 the envelope" in ys.verdict(_row(tip_ratio="1.1"))[0]
    assert "off branch" in ys.verdict(_row(crank_spread_rad="3.1e+00"))[0]
    assert ys.verdict(_row(crossings="9"))[0].startswith("crossings 9/10")
    assert ys.verdict(_row(crossings="10 (not monitored)"))[0].startswith("crossings")
    # a run whose phase is ahead passes one more crossing than the exact solution: judged against its own
    assert ys.verdict(_row(crossings="21", crossings_expected="20", crossings_own="21")) == []
    assert ys.verdict(_row(crossings="20", crossings_expected="20", crossings_own="21"))[0].startswith("crossings")
    assert ys.verdict(_row(crossings="21", crossings_expected="20", crossings_own=""))[0].startswith("crossings")
    stop = "model 'double-four-bar' at t = 0.714: a singular configuration at t = 0.714356 (rank 12 of 14)"
    assert ys.verdict(_row(formulation="minimal", status="STOPPED", message=stop)) == []
    assert ys.verdict(_row(formulation="lagrange", status="STOPPED", message=stop))[0].startswith("STOPPED")
    assert ys.verdict(_row(formulation="minimal", status="TIMEOUT", message="> 600 s CPU")) == ["TIMEOUT: > 600 s CPU"]
    # no yardstick (2x2 four-bar, a fixed-step row): judged on branch and crossings only
    assert ys.verdict(_row(tip_ratio="", tip_error_m="-", crossings_own="", crossings="7", crossings_expected="7")) == []


def test_check_lists_the_failing_cells_and_exits_nonzero(tmp_path, capsys, monkeypatch):
    path = tmp_path / "m.csv"
    rows = [_row(), _row(rtol="1e-08", atol="1e-10", tip_ratio="2.5", blas_kernel="Prescott"),
            _row(integrator="generalized-alpha", rtol="", atol="", step="1e-03", status="n/a", message="use lagrange")]
    with open(path, "w", newline="") as f:
        w = csv.DictWriter(f, sm.FIELDS, extrasaction="ignore")
        w.writeheader()
        w.writerows(rows)
    assert ys.check(str(path)) == 1
    out = capsys.readouterr().out
    assert "FAIL double-four-bar lagrange dopri5 1e-08 / 1e-10 [Prescott]: tip 8.00e-04 m, x2.5" in out
    assert "1 of 2 cells fail" in out
    assert ys.check(str(path), kernel="default") == 0
    assert "0 of 1 cells fail" in capsys.readouterr().out
    monkeypatch.setattr(sys, "argv", ["singular_matrix.py", "--check", str(path)])
    with pytest.raises(SystemExit) as stop:
        sm.main()
    assert stop.value.code == 1


def _cell_configuration(model, spread, mean=0.0):
    """The double four-bar's bars with the first cell's cranks at mean + spread / 2 (bar1) and mean - spread / 2
    (bar3), the second cell parallel to bar3, each coupler centred between the tips it joins and along them."""
    q, r, i = model.configuration("singular").copy(), ys.LINK, model.coordinate_index
    angles = {1: mean + spread / 2, 3: mean - spread / 2, 5: mean - spread / 2}  # hinged at x = 0, 1, 2
    tips = {}
    for hinge, (k, th) in enumerate(angles.items()):
        q[[i(f"bar{k}.x"), i(f"bar{k}.y"), i(f"bar{k}.theta")]] = (hinge + r / 2 * np.cos(th), r / 2 * np.sin(th), th)
        tips[k] = np.array([hinge + r * np.cos(th), r * np.sin(th)])
    for k, (a, b) in ((2, (1, 3)), (4, (3, 5))):
        d = tips[b] - tips[a]
        q[[i(f"bar{k}.x"), i(f"bar{k}.y"), i(f"bar{k}.theta")]] = (*(tips[a] + d / 2), np.arctan2(d[1], d[0]))
    return q


def test_spread_limit_is_the_spread_the_position_tolerance_leaves_at_the_singular_configuration():
    """At the singular configuration (cranks horizontal, theta* = 0) a cell whose cranks are spread by
    delta = 2 sqrt(L e) / r, with the coupler centred between the tips, has hinge rows of |Phi| = (|P2 - P1| - L) / 2
    = (sqrt(L^2 + 4 r^2 sin^2(delta / 2)) - L) / 2 = e (1 + O(e)) along the coupler: the model's own constraint rows
    at the limit equal the run's position tolerance e (Runge-Kutta 1e-12, generalized-alpha 1e-10 of the length
    scale). The other branch (the anti-parallelogram, theta3 - theta1 = 2 theta_bar) satisfies Phi = 0 and is beyond
    the limit as soon as theta_bar > limit / 2."""
    from multibody.assembly import Workspace
    from multibody.models.four_bars import double_four_bar
    model = double_four_bar()
    ws, v = Workspace(model), np.zeros(model.n)
    assert ys.crank_groups(model.coordinate_names) == [["bar1.theta", "bar3.theta", "bar5.theta"]]
    for integrator in ("dopri5", "generalized-alpha"):
        e = ys.position_tolerance(integrator) * model.length_scale
        per_cell = ys.spread_limit("double-four-bar", integrator) / 2          # two cells
        assert per_cell == pytest.approx(2 * math.sqrt(ys.LINK * e) / ys.LINK, rel=1e-15)
        phi = ws.constraints(0.0, _cell_configuration(model, per_cell), v)[0]
        assert np.abs(phi).max() == pytest.approx(e, rel=1e-4)
        other = _cell_configuration(model, 2 * per_cell, mean=-per_cell)    # theta3 - theta1 = 2 theta_bar
        assert np.abs(ws.constraints(0.0, other, v)[0]).max() < 1e-15
    assert ys.position_tolerance("dop853") == 1e-12 and ys.position_tolerance("generalized-alpha") == 1e-10


def test_verdict_judges_the_spread_by_the_rows_model_and_integrator():
    """The N = 40 generalized-alpha run at h = 1e-4 (spread 1.2e-6 rad inside its crossing windows) is on its branch;
    the same spread on the double four-bar's Runge-Kutta run is too (limit 5.7e-6 rad); 1e-4 rad is off the branch of
    the double four-bar under either integrator (generalized-alpha 5.7e-5 rad) and on it for N = 40 (5.1e-3 rad)."""
    ga = dict(integrator="generalized-alpha", rtol="", atol="", step="1e-04", tip_ratio="")
    assert ys.verdict(_row(model="n-four-bar-40", crank_spread_rad="1.2e-06", crossings="20", crossings_own="20",
                           **ga)) == []
    assert ys.verdict(_row(crank_spread_rad="1.2e-06")) == []
    assert ys.verdict(_row(crank_spread_rad="1.0e-04"))[0].startswith("off branch (crank spread 1.0e-04 rad > 5.7e-06")
    assert ys.verdict(_row(crank_spread_rad="1.0e-04", **ga))[0].startswith("off branch")
    assert ys.verdict(_row(model="n-four-bar-40", crank_spread_rad="1.0e-04", crossings="20", crossings_own="20",
                           **ga)) == []
