"""The projection formulation on the sparse path (issue 12, N = 40): paper 002's eq. 7,
q'' = a + M^-1 A^T (A M^-1 A^T)^-1 (gamma - A a), is the Schur-complement solve of formulations.lagrange_sparse, so a
large model with independent rows takes that path (band or SuperLU factorisation of S = A M^-1 A^T) with its dense
window next to a singular configuration, instead of dense factorisations and SVDs at every evaluation.

Assertions from linear algebra and mechanics: eq. 7 evaluated sparse and dense differ by round-off, at most a few eps
cond(S) = eps (s_max / s_min)^2 relative (Higham, Accuracy and Stability, Sect. 10.1 for the Cholesky solve of S); the
exact reduction theta'' = -k cos theta of the N-four-bar (all cranks parallel, couplers translating); the global error
bounded by the local errors the step control admits (test_crossing_step.AMPLIFICATION). The N-four-bar with 25 cells
(n = 153) is the smallest on the sparse path and has the 40-cell chain's structure.
"""
from __future__ import annotations

import numpy as np
import pytest

from multibody import RunOptions, simulate
from multibody.formulations.projection import Projection
from multibody.models.four_bars import n_four_bar

from test_crossing_step import _branch_state
from test_sparse_crossing import CELLS, assert_crossed_on_the_branch

#: the round-off of eq. 7 in units of eps cond(S) |q''|: the Cholesky backward error (c n eps with small c) and the
#: refinement of the sparse solve (linalg.sparse.schur_accelerations) leave it at a few units
ROUND_OFF_UNITS = 100.0


def test_projection_takes_the_sparse_path_on_a_large_chain():
    """n = 153 with independent rows: the automatic sparse path, every row kept (no pivoted QR per step)."""
    form = Projection(n_four_bar(cells=CELLS))
    assert form.sparse and form.schur_solve
    assert not Projection(n_four_bar(cells=CELLS), sparse=False).sparse


@pytest.mark.parametrize("theta", [0.3, 0.05])
def test_sparse_eq7_equals_the_dense_eq7(theta):
    """The sparse path's right-hand side equals the dense evaluation of eq. 7 (Projection with sparse=False) to
    ROUND_OFF_UNITS eps (s_max / s_min)^2 relative, away from the dense window (s_min / s_max > 1e-3)."""
    model = n_four_bar(cells=CELLS)
    sparse, dense = Projection(model), Projection(model, sparse=False)
    q, v = _branch_state(model, CELLS, theta, -4.8)
    y = np.concatenate([q, v])
    sparse.initial_state(0.0, q, v)
    dense.initial_state(0.0, q, v)
    s = np.linalg.svd(dense.ws.constraints(0.0, q, v)[1], compute_uv=False)
    assert s[-1] / s[0] > 1e-3
    a_sparse, a_dense = sparse.rhs(0.0, y)[model.n:], dense.rhs(0.0, y)[model.n:]
    bound = ROUND_OFF_UNITS * np.finfo(float).eps * (s[0] / s[-1]) ** 2 * np.abs(a_dense).max()
    assert np.abs(a_sparse - a_dense).max() <= bound


@pytest.mark.parametrize("integrator, rtol, atol", [("dopri5", 1e-10, 1e-10), ("dop853", 1e-12, 1e-14)])
def test_sparse_projection_crosses_on_the_branch(integrator, rtol, atol):
    """Through the first crossing (t* = 0.72 s) on the sparse path: the dense window taken, no step below
    SMALLEST_SHARE of the largest, the crossing found once with the rank drop of all cells, the cranks parallel and
    the tip within the sum of the admitted local errors."""
    model = n_four_bar(cells=CELLS)
    r = simulate(model, t_end=1.0, formulation="projection",
                 options=RunOptions(integrator=integrator, rtol=rtol, atol=atol))
    assert r.summary["independent_constraint_rows"] == model.n - 1      # one degree of freedom: every row kept
    assert_crossed_on_the_branch(model, r, rtol, atol)
