"""The sparse path next to a singular configuration (issue 12): its velocity projection and the velocity part of its
error filter follow the dense rule (formulations.lagrange.PIN), so a direction of singular value s_i <= PIN s_max is
left as the integrator predicted it and measured at full weight, as on the dense path.

Why (linalg.sparse.SPARSE_VELOCITY_PIVOT_RATIO): a velocity solve turns the round-off of the positions along a
direction of singular value s into eps L omega / s^2. SuperLU factorised A A^T down to s_min / s_max ~ 1e-6 on the
N-four-bar-40 and its velocity projection then changed the velocity by 1.5e5 tolerances at rtol 1e-12 (a loud stop).
Mathematics asserted: the component of the velocity (or of the velocity error) along the right singular vector of the
smallest singular value is unchanged by the projection (or the filter) when that value is below PIN s_max: exactly
what the dense pinned solve (truncated SVD) does, to round-off.
"""
from __future__ import annotations

import numpy as np
import pytest

from multibody.formulations.lagrange import PIN, Lagrange
from multibody.linalg.sparse import SPARSE_PIVOT_RATIO, SPARSE_VELOCITY_PIVOT_RATIO
from multibody.models.four_bars import n_four_bar

CELLS, THETA = 25, 1e-4


def branch_state(model, theta, omega=-4.8):
    """(q, v) of the N-four-bar on its parallel branch with every crank at angle theta turning at omega (couplers
    horizontal, translating)."""
    q, v = np.zeros(model.n), np.zeros(model.n)
    for i, name in enumerate(model.coordinate_names):
        bar, c = name.split(".")
        k = int(bar[3:])
        crank = k % 2 == 1
        r = 0.5 if crank else 1.0
        x0 = (k - 1) // 2 if crank else k // 2 - 0.5
        q[i] = {"x": x0 + r * np.cos(theta), "y": r * np.sin(theta), "theta": theta if crank else 0.0}[c]
        v[i] = {"x": -r * np.sin(theta) * omega, "y": r * np.cos(theta) * omega, "theta": omega if crank else 0.0}[c]
    return q, v


@pytest.fixture(scope="module")
def near_singular():
    """The sparse path of 25 cells (n = 153: the automatic sparse kinematics too) at crank angle 1e-4 rad, where s_min / s_max of A is below PIN while SuperLU's pivot
    ratio of A A^T is still above SPARSE_PIVOT_RATIO (so SuperLU alone would pin the direction)."""
    model = n_four_bar(cells=CELLS)
    form = Lagrange(model, sparse=True, fast=False)
    q, v = branch_state(model, THETA)
    A = form.ws.velocity_constraints(0.0, q, v)[1]
    _, s, Wt = np.linalg.svd(A)
    lu_ratio = _superlu_ratio(A)
    return form, q, v, s, Wt[len(s) - 1], lu_ratio


def _superlu_ratio(A):
    import scipy.sparse as sp
    import scipy.sparse.linalg as spla
    lu = spla.splu(sp.csc_matrix(A @ A.T), permc_spec="MMD_AT_PLUS_A", diag_pivot_thresh=0.0,
                   options={"SymmetricMode": True})
    d = np.abs(lu.U.diagonal())
    return d.min() / d.max()


def test_the_configuration_is_where_the_two_rules_differed(near_singular):
    _, _, _, s, _, lu_ratio = near_singular
    assert s[-1] < PIN * s[0]
    assert SPARSE_PIVOT_RATIO < lu_ratio < SPARSE_VELOCITY_PIVOT_RATIO


def test_the_velocity_projection_leaves_an_unpinned_direction_as_predicted(near_singular):
    form, q, v, s, u, _ = near_singular
    n = form.model.n
    bump = 1e-9 * u
    y = form.after_step(0.0, np.concatenate([q, v + bump]))
    assert (y[n:] - v) @ u == pytest.approx(1e-9, rel=1e-6)


def test_the_error_filter_measures_an_unpinned_velocity_direction_at_full_weight(near_singular):
    form, q, v, s, u, _ = near_singular
    n = form.model.n
    err = np.concatenate([np.zeros(n), u])
    out = form.error_filter(0.0, np.concatenate([q, v]), err)
    assert out[n:] @ u == pytest.approx(1.0, rel=1e-6)
