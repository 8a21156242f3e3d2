"""The singular tracker's compiled objective never ends a run with numba's "failed to converge" (issue 12):
fast.nullspace_kernels.singular_value takes LAPACK's divide and conquer SVD and, where that raises, one-sided
Jacobi (jacobi_singular_values), which converges for every finite matrix. numba raises for a non-finite matrix
too, so such a matrix goes down the fallback path, where it is refused (ok False: the tracker runs its reference)."""
from __future__ import annotations

import numpy as np
import pytest

pytest.importorskip("numba")

from multibody.assembly import Workspace  # noqa: E402
from multibody.fast.nullspace_kernels import jacobi_singular_values, singular_value  # noqa: E402
from multibody.models import MODELS  # noqa: E402

EPS = np.finfo(float).eps


@pytest.mark.parametrize("m, k", [(5, 6), (14, 15), (40, 61)])
def test_jacobi_finds_the_singular_values_of_a_constructed_matrix(m, k, rng):
    """M = U diag(s) V^T with orthonormal U, V and s graded from 1 to 1e-12: the computed values are those of M
    rounded, within |E|_2 <= sqrt(m k) eps |M| of s (Weyl), plus the backward error of the rotations (O(m eps |M|),
    Demmel, Applied Numerical Linear Algebra, Thm 5.16); 10 m eps bounds both."""
    U = np.linalg.qr(rng.standard_normal((m, m)))[0]
    V = np.linalg.qr(rng.standard_normal((k, m)))[0]
    s = np.logspace(0.0, -12.0, m)
    sv, ok = jacobi_singular_values((U * s) @ V.T)
    assert ok
    assert np.max(np.abs(sv - s)) <= 10 * max(m, np.sqrt(m * k)) * EPS * s[0]


def test_jacobi_sees_the_rank_drop_of_the_double_four_bar():
    """At the double four-bar's all-horizontal configuration its 15 constraint rows have rank 12 (paper 000
    Sect. 3.2; rank 14 at the vertical start): sigma_13 = sigma_14 = sigma_15 = 0 exactly, so the computed ones are
    round-off (<= 100 eps sigma_1), and the values agree with LAPACK's to that round-off."""
    model = MODELS["double-four-bar"].factory()
    ws = Workspace(model)
    for name, rank in (("singular", 12), (None, 14)):
        q = np.asarray(model.configuration(name) if name else model.q0, float)
        A = np.ascontiguousarray(ws.constraints(0.0, q, np.zeros_like(q))[1])
        sv, ok = jacobi_singular_values(A)
        assert ok
        assert np.all(sv[rank:] <= 100 * EPS * sv[0]) and sv[rank - 1] > 1e-3 * sv[0]
        assert np.max(np.abs(sv - np.linalg.svd(A, compute_uv=False))) <= 100 * EPS * sv[0]


def test_a_failing_svd_is_caught_inside_the_kernel():
    """numba's SVD raises for a non-finite matrix as it does for a failed convergence; singular_value catches it,
    its fallback refuses the matrix (ok False) and no exception leaves the compiled code. A finite matrix gives
    LAPACK's value (to round-off: numba's gesdd also computes the vectors, NumPy's not)."""
    M = np.arange(30.0).reshape(5, 6) ** 0.5
    value, ok = singular_value(M, 3)
    s = np.linalg.svd(M, compute_uv=False)
    assert ok and abs(value - s[2]) <= 10 * EPS * s[0]
    M[2, 3] = np.nan
    value, ok = singular_value(M, 3)
    assert not ok
