"""The solves on the non-zeros of X = Phi_q[rows] (multibody.fast.spatial_sparse; issue 16) for spatial director
models.

- The structure (RowPattern) comes from the packed table: every entry of Phi_q(q)[rows] that is not zero at a random
  q lies in it, its CSR and CSC forms list the same places, and X X^T vanishes left of each row's envelope start.
- The right-hand side performs the dense kernel's operations (spatial_step_kernels.schur_rhs) on the non-zeros in the
  same order, adding only exact zeros less: the results are equal to the last bit (asserted exactly).
- The projection and the error filter against the NumPy reference: tests/test_fast_spatial_step.py (through
  SpatialStep, which calls them).
"""
from __future__ import annotations

import numpy as np
import pytest

pytest.importorskip("numba")

from multibody.fast.spatial_sparse import RowPattern, row_pattern, sparse_rhs  # noqa: E402
from multibody.fast.spatial_step_kernels import schur_rhs  # noqa: E402
from multibody.formulations.lagrange import Lagrange  # noqa: E402
from multibody.models.spatial_models import gyro_top, six_body_linkage  # noqa: E402


@pytest.fixture(params=[gyro_top, six_body_linkage], ids=["gyro-top", "six-body-linkage"])
def form(request):
    model = request.param()
    form = Lagrange(model)
    form.initial_state(0.0, model.q0, model.v0)
    return form


def dense_rows(pattern: RowPattern, n: int) -> np.ndarray:
    """The structure as a boolean (r, n) array, from the CSR lists."""
    rowptr, col = pattern.pat[4], pattern.pat[5]
    X = np.zeros((len(pattern.rows), n), bool)
    for a in range(len(pattern.rows)):
        X[a, col[rowptr[a]: rowptr[a + 1]]] = True
    return X


def test_pattern_holds_every_nonzero_of_the_rows(form):
    table, n = form.fast_rhs.table, form.model.n
    pattern = row_pattern(table, form.active)
    X = dense_rows(pattern, n)
    rng = np.random.default_rng(5)
    for _ in range(3):
        G = table.evaluate(rng.standard_normal(n))[1][pattern.rows]
        assert not np.any((G != 0) & ~X)
    colptr, crow, cpos, col = pattern.pat[6], pattern.pat[7], pattern.pat[8], pattern.pat[5]
    for j in range(n):          # CSC: the same places, rows ascending
        rows = crow[colptr[j]: colptr[j + 1]]
        assert np.array_equal(rows, np.flatnonzero(X[:, j])) and np.all(col[cpos[colptr[j]: colptr[j + 1]]] == j)
    gram = X.astype(int) @ X.T.astype(int)
    first = pattern.pat[9]
    for a in range(len(first)):
        assert first[a] <= a and not gram[a, :first[a]].any() and gram[a, first[a]]


def test_pattern_is_kept_per_row_set(form):
    table = form.fast_rhs.table
    assert row_pattern(table, form.active) is row_pattern(table, form.active[::-1])
    assert sorted(row_pattern(table, form.active).rows) == sorted(form.active)


def test_sparse_rhs_equals_the_dense_kernel(form):
    rhs, model = form.fast_rhs, form.model
    if not rhs.diag:
        pytest.skip("the sparse Schur product is for a diagonal mass matrix")
    n, table = model.n, rhs.table
    pattern = row_pattern(table, form.active)
    r, m = len(pattern.rows), table.m
    rng = np.random.default_rng(6)
    for k in range(3):
        y = np.r_[model.q0 + 1e-3 * k * rng.standard_normal(n), model.v0 + 0.1 * k * rng.standard_normal(n)]
        a, b = np.empty(2 * n), np.empty(2 * n)
        ok_a = sparse_rhs(y, pattern.pat, table.tab, rhs.minv, rhs.f, rhs.tau, np.empty(pattern.nnz), np.empty(r),
                          np.zeros((r, r)), np.empty(r), a)
        ok_b = schur_rhs(y, pattern.rows, *table.tab, rhs.minv, rhs.f, rhs.tau, np.empty(m), np.empty((m, n)),
                         np.empty(m), np.zeros((r, n)), np.empty(r), np.zeros((r, n)), np.zeros((r, r)), np.empty(r), b)
        assert ok_a and ok_b and np.array_equal(a, b)
