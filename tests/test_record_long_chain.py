"""The stored states of a long chain on the sparse path (issue 16: the chain N = 1000, whole simulate() against its
integration loop): recorded by the band Schur solve, not the SuperLU reference, and the reactions gathered in one
compiled call.

Why the band solve used to decline there: its pivot ratio min_j L_jj^2 / max_j S_jj of S = A M^-1 A^T falls like
0.2 / N along a chain (a path of joints: S is a discrete Laplacian, whose Cholesky pivots shrink towards the free
end), ~7e-4 at N = 300, far from any singular configuration, below the right-hand side's SCHUR_PIVOT_RATIO (1e-3),
while the SuperLU reference it stands in for accepts down to SPARSE_PIVOT_RATIO (1e-10). Both solve the same
symmetric positive definite system by a factorisation without pivoting, so their answers agree to eps cond(S).
"""
from __future__ import annotations

import sys
from pathlib import Path

import numpy as np
import pytest

pytest.importorskip("numba")

from multibody import RunOptions, simulate  # noqa: E402
from multibody.analysis.reactions import reaction_map  # noqa: E402
from multibody.fast.band import BandStep  # noqa: E402
from multibody.fast.lagrange import SCHUR_PIVOT_RATIO  # noqa: E402
from multibody.formulations import lagrange_sparse  # noqa: E402
from multibody.formulations.registry import make_formulation  # noqa: E402
from multibody.kinematics import consistent_state  # noqa: E402
from multibody.linalg.sparse import SPARSE_PIVOT_RATIO  # noqa: E402
from multibody.simulation import record_batch, recorder  # noqa: E402

sys.path.insert(0, str(Path(__file__).resolve().parents[1] / "benchmarks"))
from chains import bar_chain  # noqa: E402

BARS = 300


@pytest.fixture(scope="module")
def chain():
    return bar_chain(BARS, np.pi / 6)


def _schur(form, q, v):
    """S = A M^-1 A^T (dense) and the band pivot ratio at (q, v)."""
    from multibody.fast import band_kernels
    band, n = form.band_step.band, form.model.n
    form.band_step.record(0.0, q, v)
    vals, rows, cols = band.work[2], band.work[3], band.work[4]
    A = np.zeros((form.ws.m, n + 1))
    np.add.at(A, (rows, cols), vals)
    A = A[:, :n]
    S = A @ (band.minv[:, None] * A.T)
    B = np.zeros((form.ws.m, band.pattern.w + 1))
    band_kernels.band_gram(vals, cols, n, band.minv, band.pattern.pairs, B)
    return S, band_kernels.band_cholesky(B)


def test_a_long_chain_is_recorded_by_the_band_solve_to_the_reference(chain, monkeypatch):
    """300 bars (n = 900), generalized-alpha, 5 steps: the band pivot ratio lies between the two thresholds; no stored
    state goes to SuperLU; the accelerations and multipliers equal those of the same run recorded state by state by
    the SuperLU reference to eps cond(S) relative."""
    form = make_formulation("lagrange", chain)
    S, ratio = _schur(form, *consistent_state(chain, 0.0))
    assert SPARSE_PIVOT_RATIO < ratio < SCHUR_PIVOT_RATIO
    opts = RunOptions(integrator="generalized-alpha", step=1e-3)
    calls, recording = [], []
    solve, flush = lagrange_sparse.SparseLagrange.solve, recorder.flush
    monkeypatch.setattr(lagrange_sparse.SparseLagrange, "solve",
                        lambda self, *a: calls.append(bool(recording)) or solve(self, *a))
    monkeypatch.setattr(recorder, "flush", lambda *a: recording.append(1) or flush(*a) or recording.clear())
    batch = simulate(chain, t_end=0.005, options=opts)
    assert not any(calls)                        # SuperLU only in the integrator's own start, not for a stored state
    monkeypatch.setattr(record_batch, "_batch", lambda rec, states: 0)      # every state by the per-state path ...
    monkeypatch.setattr(BandStep, "record", lambda self, t, q, v: None)     # ... and that by the SuperLU reference
    calls.clear()
    reference = simulate(chain, t_end=0.005, options=opts)
    assert sum(calls) == len(reference.t)
    assert np.array_equal(batch.q, reference.q)
    bound = 10 * np.finfo(float).eps * np.linalg.cond(S)
    for name in ("a", "multipliers"):
        got, want = np.asarray(batch.series[name].data), np.asarray(reference.series[name].data)
        assert np.max(np.abs(got - want)) <= bound * np.max(np.abs(want)), name


def test_compiled_reaction_gather_is_the_numpy_one(chain):
    """fast.reaction_kernels.gather_reactions sums the terms of ReactionMap.generalized_entries_batch in the same
    order: the same numbers, a state with a NaN multiplier NaN throughout."""
    from multibody.fast.reaction_kernels import gather_reactions
    form = make_formulation("lagrange", chain)
    step = form.band_step
    reactions = reaction_map(chain)
    targets = reactions.entry_targets(step.pattern.rows, step.pattern.cols)
    rng = np.random.default_rng(12)
    q, v = consistent_state(chain, 0.0)
    vals = np.array([step.record(0.0, q + 1e-3 * rng.standard_normal(chain.n), v)[3][0] for _ in range(4)])
    lam = rng.standard_normal((4, form.ws.m))
    lam[2, 7] = np.nan
    want = reactions.generalized_entries_batch(vals, lam, targets)
    got = np.empty((4, 3 * len(reactions.joint)))
    gather_reactions(vals, lam, *targets, got)
    np.testing.assert_array_equal(got.reshape(want.shape), want)
    assert np.isnan(got[2]).all() and np.isfinite(got[[0, 1, 3]]).all()
