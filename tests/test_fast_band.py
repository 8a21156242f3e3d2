"""The band Schur solve (multibody.fast.band, issue 16) reproduces the dense solves and the reference paths.

The band kernels compute the same mathematical quantities as the dense kernels and the NumPy/SuperLU reference
(the Schur complement S = A M^-1 A^T, paper 000 eq. 3 with M eliminated; the minimum-norm corrections
A^T (A A^T)^-1 b of the projection and the error filter), in another row order and summation order: they differ
by round-off, eps times a moderate condition number, so ROUND_OFF (1e-12 relative, as in test_fast.py) is
asserted. The band Cholesky factor is unique (SPD matrix, positive diagonal), so it equals LAPACK's dense factor
to round-off.
"""
from __future__ import annotations

import numpy as np
import pytest
import scipy.sparse as sp

pytest.importorskip("numba")

from multibody.fast.band import BandStep, SparseBandRhs  # noqa: E402
from multibody.fast.band_kernels import band_cholesky, band_cholesky_solve, band_gram  # noqa: E402
from multibody.fast.entries import entry_count, terms_entries  # noqa: E402
from multibody.fast.kernels import assemble  # noqa: E402
from multibody.fast.lagrange import FastLagrangeRhs  # noqa: E402
from multibody.fast.packed import PackedModel  # noqa: E402
from multibody.formulations.lagrange import Lagrange  # noqa: E402
from test_fast import ROUND_OFF, all_primitives_model, random_states, rel_diff  # noqa: E402
from test_fast_step import filter_diff  # noqa: E402
from test_generalized_alpha import chain  # noqa: E402


def dense_from_entries(vals, rows, cols, count, m, n):
    """A (m, n) summed from the triplets (the ground column n dropped)."""
    A = np.zeros((m, n + 1))
    np.add.at(A, (rows[:count], cols[:count]), vals[:count])
    return A[:, :n]


@pytest.mark.parametrize("model", [all_primitives_model(), chain(6)], ids=lambda m: m.name)
def test_entries_and_gamma_equal_the_dense_assembly(model):
    pack, n, m = PackedModel(model), model.n, sum(g.rows for g in model.constraints)
    pk = (pack.prim, pack.pval, pack.mcols, pack.mloc, pack.mvec)
    size = entry_count(pack)
    for y in random_states(model, np.random.default_rng(3), count=3):
        qe, ve = np.r_[y[:n], 0.0], np.r_[y[n:], 0.0]
        A, gamma = np.zeros((m, n + 1)), np.zeros(m)
        assemble(qe, ve, *pk, A, gamma)
        vals, rows, cols, g = np.zeros(size), np.zeros(size, np.int64), np.zeros(size, np.int64), np.zeros(m)
        count = terms_entries(qe, ve, *pk, vals, rows, cols, g)
        assert count == size
        assert np.allclose(dense_from_entries(vals, rows, cols, count, m, n), A[:, :n], rtol=0,
                           atol=1e-15 * np.abs(A).max())
        assert np.allclose(g, gamma, rtol=0, atol=1e-15 * max(1.0, np.abs(gamma).max()))


def test_band_cholesky_equals_the_dense_factor_and_solve():
    """A random SPD band matrix (half bandwidth 3): the band factor is LAPACK's Cholesky factor, the solve
    numpy's, and the pivot ratio min L_jj^2 / max S_jj."""
    rng, m, w = np.random.default_rng(1), 40, 3
    B = np.triu(np.tril(rng.standard_normal((m, m)), 0), -w)
    S = B @ B.T + 0.1 * np.eye(m)          # half bandwidth <= 2 w; keep the band w of the lower part
    S = np.tril(np.triu(S, -w), w)
    S += np.eye(m) * (np.abs(S).sum(axis=1).max())      # diagonally dominant: SPD
    band = np.zeros((m, w + 1))
    for d in range(w + 1):
        band[d:, d] = np.diag(S, -d)
    ratio = band_cholesky(band)
    L = np.linalg.cholesky(S)
    for d in range(w + 1):
        assert rel_diff(band[d:, d], np.diag(L, -d)) < ROUND_OFF
    assert np.isclose(ratio, (np.diag(L) ** 2).min() / np.diag(S).max(), rtol=1e-12)
    b = rng.standard_normal(m)
    x = b.copy()
    band_cholesky_solve(band, x)
    assert rel_diff(x, np.linalg.solve(S, b)) < ROUND_OFF


def test_band_gram_equals_the_dense_product():
    """S = A D A^T from the entry pairs, in the band order of the rows, against the dense product."""
    model = chain(8)
    form = Lagrange(model)
    band, n, m = form.fast_rhs.band, model.n, form.ws.m
    p = band.pattern
    y = next(random_states(model, np.random.default_rng(2), count=1))
    qe, ve = np.r_[y[:n], 0.0], np.r_[y[n:], 0.0]
    vals, gamma = np.zeros(p.count), np.zeros(m)
    rows, cols = p.rows.copy(), p.cols.copy()
    count = terms_entries(qe, ve, *band.pk, vals, rows, cols, gamma)
    A = dense_from_entries(vals, rows, cols, count, m, n)
    d = np.random.default_rng(4).uniform(0.5, 2.0, n)
    S = np.zeros((m, p.w + 1))
    band_gram(vals, cols, n, d, p.pairs, S)
    dense = np.zeros((m, m))
    dense[np.ix_(p.iperm, p.iperm)] = (A * d) @ A.T          # rows moved to their band positions
    for k in range(p.w + 1):
        assert rel_diff(S[k:, k], np.diag(dense, -k)) < ROUND_OFF
    assert np.abs(np.tril(dense, -p.w - 1)).max() == 0.0                # nothing outside the band


@pytest.mark.parametrize("n_bars, tip", [(10, 1.0), (10, 0.0), (60, 1.0)])
def test_band_rhs_equals_the_reference(n_bars, tip):
    """The chain's rhs by the band solve (dense path: FastLagrangeRhs.band; n >= 150: SparseBandRhs) against
    the NumPy reference (dense SVD solve, or SuperLU on the sparse path)."""
    model = chain(n_bars, tip)
    fast, ref = Lagrange(model), Lagrange(model, fast=False)
    sparse = model.n >= 150
    assert isinstance(fast.fast_rhs, SparseBandRhs if sparse else FastLagrangeRhs) and ref.fast_rhs is None
    assert fast.fast_rhs.band is not None and fast.sparse == ref.sparse == sparse
    for y in random_states(model, np.random.default_rng(7), count=3, spread=0.01):
        assert rel_diff(fast.rhs(0.4, y), ref.rhs(0.4, y)) < ROUND_OFF
    assert fast.fast_rhs.paths[0] == 3


def test_declined_band_solve_takes_the_svd_solve():
    """With a pivot-ratio threshold no S can meet, the band solve declines every time and the SVD solve gives
    the reference's numbers."""
    model = chain(10)
    form, ref = Lagrange(model), Lagrange(model, fast=False)
    strict = FastLagrangeRhs(form, schur_pivot_ratio=1.0 - 1e-15)
    assert strict.band is not None
    for y in random_states(model, np.random.default_rng(5), count=2, spread=0.01):
        assert rel_diff(strict(0.0, y), ref.rhs(0.0, y)) < ROUND_OFF
    assert strict.paths == [0, 2]


@pytest.mark.parametrize("n_bars", [10, 60])
def test_band_projection_and_filter_equal_the_reference(n_bars):
    """Lagrange.after_step and the error filter by the band minimum-norm solves (FastStep.band_step, BandStep on
    the sparse path) against the reference (dense SVD or SuperLU), the filter also with the forced velocity change of
    speeds ~ 1 (Lagrange._forced_change: SparseLagrange.forced_change on the sparse path)."""
    model = chain(n_bars)
    fast, ref = Lagrange(model), Lagrange(model, fast=False)
    step = fast.band_step if fast.sparse else fast.fast_step.band_step
    assert isinstance(step, BandStep)
    rng, n = np.random.default_rng(11), model.n
    y0 = np.r_[model.q0, model.v0]
    for t in (0.0, 0.37):
        y = y0 + 1e-4 * rng.standard_normal(2 * n)
        assert step.project(t, y) is not None
        got, want = fast.after_step(t, y), ref.after_step(t, y)
        assert np.abs(got[:n] - want[:n]).max() < 10 * ROUND_OFF * model.length_scale
        assert np.abs(got[n:] - want[n:]).max() < 10 * ROUND_OFF * max(1.0, np.abs(want[n:]).max())
        err = rng.standard_normal(2 * n)
        assert step.tangent_error(t, y, err) is not None
        assert filter_diff(fast, ref, t, y, err) < ROUND_OFF
        y[n:] = rng.standard_normal(n)      # speeds ~ 1: the forced velocity change (band_forced_change) counts
        forced = ref._forced_change(t, y[:n], y[n:], err[:n])
        assert np.abs(forced).max() > 1e-2 * np.abs(err).max()
        assert filter_diff(fast, ref, t, y, err) < ROUND_OFF


def test_band_record_equals_the_sparse_reference():
    """A stored state on the sparse path (simulation.recorder): accelerations and multipliers by the band Schur
    solve (BandStep.record) against SuperLU (Lagrange.accelerations, the reference), M q'' + A^T lambda = f
    (paper 000 eq. 3); the constraint violations against the Workspace's sparse evaluation."""
    model = chain(60, 1.0)
    fast, ref = Lagrange(model), Lagrange(model, fast=False)
    assert fast.sparse and isinstance(fast.band_step, BandStep)
    for y in random_states(model, np.random.default_rng(3), count=2, spread=0.01):
        q, v = y[: model.n], y[model.n:]
        vdot, lam, (phi, vel), A = fast.band_step.record(0.2, q, v)
        want = ref.accelerations(0.2, q, v)
        assert rel_diff(vdot, want.vdot) < ROUND_OFF and rel_diff(lam, want.multipliers) < ROUND_OFF
        Phi, A_ref, Phi_t, _ = ref.ws.sparse_constraints(0.2, q, v)
        assert abs(phi - np.abs(Phi).max()) <= ROUND_OFF * model.length_scale
        assert abs(vel - np.abs(A_ref @ v + Phi_t).max()) <= ROUND_OFF * np.abs(v).max()
        vals, rows, cols = A            # entry triplets, duplicates summed; column n is the ground's
        keep = cols < model.n
        A_got = sp.coo_matrix((vals[keep], (rows[keep], cols[keep])), shape=A_ref.shape)
        assert abs(A_got - A_ref).max() <= ROUND_OFF


def test_column_pairs_are_those_of_the_loop_over_columns():
    """band._column_pairs (vectorised per group size) gives the pairs of the loop over columns with np.triu_indices
    per column, in the same order (the summation order of band_gram), for random patterns with a ground column."""
    from multibody.fast.band import _column_pairs
    rng = np.random.default_rng(6)
    for n in (1, 7, 40):
        cols = rng.integers(0, n + 1, size=5 * n)
        order = np.flatnonzero(cols < n)
        order = order[np.argsort(cols[order], kind="stable")]
        pe, pf = [], []
        for c in range(n):
            group = order[cols[order] == c]
            a, b = np.triu_indices(len(group))
            pe += group[a].tolist()
            pf += group[b].tolist()
        got = _column_pairs(cols, n)
        assert got[0].tolist() == pe and got[1].tolist() == pf
