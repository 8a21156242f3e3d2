"""benchmarks/singular_matrix.py's CSV stays readable across its columns (issue 12): --table reads rows written
before the reference columns (reduced_tip_error_m, tip_ratio) existed, rows appended to such a file keep its
header, and the ratio is the multibody tip error's phase over the yardstick's (singular_yardstick; its criterion is
tested in test_singular_yardstick.py)."""
from __future__ import annotations

import csv
import sys
from pathlib import Path

sys.path.insert(0, str(Path(__file__).resolve().parents[1] / "benchmarks"))
import singular_matrix as sm  # noqa: E402

OLD_FIELDS = sm.FIELDS[:sm.FIELDS.index("reduced_tip_error_m")]


def _row(**kw):
    base = dict(model="double-four-bar", formulation="lagrange", integrator="dopri5", rtol="1e-04", atol="1e-04",
                step="", status="ok", crank_spread_rad="3.6e-15", tip_error_m="2.30e-01", crossings="10",
                crossings_expected="10", steps="61", min_step_s="2.1e-02", max_jump_scales="1.3e+01",
                energy_drift_rel="1.2e-03", wall_s="1.0", blas_kernel="default", message="", cpu_s="0.9",
                max_branch_move="1.4e-03", max_action_tolerances="8.6e+00")
    return {**base, **kw}


def test_table_reads_rows_without_the_reference_columns(tmp_path):
    path = tmp_path / "old.csv"
    with open(path, "w", newline="") as f:
        w = csv.DictWriter(f, OLD_FIELDS)
        w.writeheader()
        w.writerow(_row())
    text = sm.table(str(path))
    assert "| double-four-bar | lagrange | dopri5 | 2.30e-01 (10/10) |" in text
    assert "exact reduction" not in text
    assert sm._header(str(path)) == OLD_FIELDS
    assert sm._header(str(tmp_path / "new.csv")) == sm.FIELDS


def test_ratio_is_the_tip_error_over_the_reduced_runs(monkeypatch):
    """tip_ratio = phase(tip_error_m) / phase(reduced_envelope_m) (2 arcsin(0.115) / 2 arcsin(0.05) = 2.30 for a
    constant reduced error 0.1 m, whose envelope is 0.1 m); no reference for the 2x2 four-bar (no closed form),
    fixed-step rows and rows that did not finish."""
    monkeypatch.setattr(sm, "reduced_tip_error", lambda cells, t_end, integrator, rtol, atol: 0.1)
    row = sm.with_reference(_row(), 2, 10.0)
    assert row["reduced_tip_error_m"] == row["reduced_envelope_m"] == "1.00e-01" and float(row["tip_ratio"]) == 2.3
    assert "tip_ratio" not in sm.with_reference(_row(), None, 2.0)
    assert "tip_ratio" not in sm.with_reference(_row(step="1e-03", rtol="", atol=""), 2, 10.0)
    assert "tip_ratio" not in sm.with_reference(_row(status="STOPPED"), 2, 10.0)
    table_row = {**_row(), **row}
    assert sm._cell(table_row) == "2.30e-01 x2.3 (10/10)"
