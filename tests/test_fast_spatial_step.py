"""The compiled per-step work of the Lagrange formulation on spatial director models (fast.spatial_step; issue 16)
reproduces the NumPy reference (projection, tangent-space error filter, accelerations and minimum-norm
multipliers), and the singular-configuration certificate (fast.spatial_monitor) computes the bound its docstring
states.

The compiled solves use the independent rows X = A[active] and the normal equations; the reference uses the SVD
of all rows. Both are the same mathematical quantities while X X^T is well conditioned (cond(X) <~ 300 here), so
they differ by round-off, ~eps cond(X)^2 <~ 1e-11 relative (ROUND_OFF keeps a margin of 10). The projection from a
state 1e-6 off the constraints: both Gauss-Newton sequences land on the manifold; their first steps differ by the
redundant row's second-order inconsistency, ~(1e-6)^2, so the projected states agree to ~1e-12 (PROJECTED).
"""
from __future__ import annotations

import numpy as np
import pytest

pytest.importorskip("numba")

from multibody.formulations.lagrange import Lagrange  # noqa: E402
from multibody.kinematics import consistent_state  # noqa: E402
from multibody.models.spatial_models import gyro_top, six_body_linkage  # noqa: E402

ROUND_OFF = 1e-10
PROJECTED = 1e-10


@pytest.fixture(params=[gyro_top, six_body_linkage], ids=["gyro-top", "six-body-linkage"])
def pair(request):
    """(compiled, reference) Lagrange formulations of the model, and a consistent state moved along the motion."""
    model = request.param()
    fast, ref = Lagrange(model), Lagrange(model, fast=False)
    q, v = consistent_state(model, 0.0, ws=ref.ws)
    fast.initial_state(0.0, q, v), ref.initial_state(0.0, q, v)
    assert fast.fast_step.spatial and ref.fast_step is None
    return model, fast, ref, q, v


def test_projection_matches_the_reference(pair):
    model, fast, ref, q, v = pair
    rng = np.random.default_rng(3)
    y = np.r_[q + 1e-6 * rng.standard_normal(model.n), v + 1e-6 * rng.standard_normal(model.n)]
    a, b = fast.fast_step.project(0.0, y), ref.after_step(0.0, y)
    assert a is not None
    scale = np.max(np.abs(b))
    assert np.max(np.abs(a - b)) <= PROJECTED * scale
    phi, A = fast.ws.constraints(0.0, a[:model.n], a[model.n:])[:2]
    assert np.max(np.abs(phi)) <= 1e-12 * model.length_scale
    assert np.max(np.abs(A @ a[model.n:])) <= ROUND_OFF * np.max(np.abs(A)) * np.max(np.abs(a[model.n:]))


def test_tangent_error_matches_the_reference(pair):
    model, fast, ref, q, v = pair
    rng = np.random.default_rng(4)
    err = 1e-8 * rng.standard_normal(2 * model.n)
    y = np.r_[q, v]
    a = fast.fast_step.tangent_error(0.0, y, err)
    b = ref._tangent_error(0.0, y, err)
    assert a is not None and np.max(np.abs(a - b)) <= ROUND_OFF * np.max(np.abs(err))


def test_recorded_outputs_match_the_reference(pair):
    """Accelerations, the minimum-norm multipliers (all rows: the linkage's redundant row shares its load by the
    minimum norm, paper 003), the violations and A."""
    model, fast, ref, q, v = pair
    out = fast.fast_step.record(0.0, q, v)
    assert out is not None
    vdot, lam, (pos, vel), A = out
    acc = ref.accelerations(0.0, q, v)
    Phi, A_ref = ref.ws.constraints(0.0, q, v)[:2]
    assert np.max(np.abs(vdot - acc.vdot)) <= ROUND_OFF * np.max(np.abs(acc.vdot))
    assert np.max(np.abs(lam - acc.multipliers)) <= ROUND_OFF * np.max(np.abs(acc.multipliers))
    assert np.max(np.abs(A - A_ref)) <= 1e-15 * np.max(np.abs(A_ref))
    assert pos == pytest.approx(np.max(np.abs(Phi)), abs=1e-15) and vel <= ROUND_OFF * np.max(np.abs(A_ref)) * \
        np.max(np.abs(v))


def test_certificate_bounds_the_relative_change():
    """fast.spatial_monitor: relative_change(L, ..., Xa, Xb) = |L^-1 (Xb - Xa)|_F with L L^T = Xa Xa^T, which bounds
    |Xa^+ (Xb - Xa)|_2, and sigma_min(Xb) >= sigma_min(Xa) (1 - |Xa^+ (Xb - Xa)|_2) (the docstring's inequality)."""
    from multibody.fast.spatial_monitor import relative_change
    from multibody.fast.spatial_step_kernels import gram_factor
    rng = np.random.default_rng(5)
    for _ in range(20):
        r, n = rng.integers(2, 8), rng.integers(8, 14)
        Xa = rng.standard_normal((r, n)) * (rng.random((r, n)) < 0.6)
        Xb = Xa + 0.1 * rng.standard_normal((r, n))
        L = np.zeros((r, r))
        if gram_factor(Xa, L) <= 0:
            continue
        L = np.tril(L)
        np.testing.assert_allclose(L @ L.T, Xa @ Xa.T, rtol=1e-12, atol=1e-12 * np.max(np.abs(Xa)) ** 2)
        rowptr, col = np.arange(0, r * n + 1, n), np.tile(np.arange(n), r)      # every entry, row by row
        rho = relative_change(L, np.zeros(r, np.int64), rowptr, col, Xa.ravel(), Xb.ravel(), np.empty((r, n)))
        exact = np.linalg.norm(np.linalg.solve(L, Xb - Xa))
        assert rho == pytest.approx(exact, rel=1e-12)
        rel = np.linalg.norm(np.linalg.pinv(Xa) @ (Xb - Xa), 2)
        assert rel <= rho * (1 + 1e-12)
        s_a, s_b = (np.linalg.svd(X, compute_uv=False)[-1] for X in (Xa, Xb))
        assert s_b >= s_a * (1 - rel) - 1e-12
