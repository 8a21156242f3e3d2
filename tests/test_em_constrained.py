"""The constrained energy-momentum step's Newton (paper 004 eq. 10; multibody.fast.em_constrained_kernels and the
reference EnergyMomentumStepper._constrained_newton): its start and its factorisation.

Eq. (10) has one root near the step's start, and Newton ends with a correction that takes it to the round-off floor,
so the extrapolated start 2 dt v_n - dq_{n-1} finds the same step as dt v_n up to the Newton tolerance: the increment
to NewtonTolerance.residual relative, the multipliers to that tolerance of the dynamic rows (their momentum scale)
divided by dt sigma_min(G) (they are read off those rows through dt G^T lambda). The LU helpers solve J x = b as LAPACK getrf + getrs do: backward stable, so the
error is within n eps cond(J) of the exact solution.
"""
from __future__ import annotations

from unittest import mock

import numpy as np
import pytest

pytest.importorskip("numba")

from multibody.errors import SimulationError  # noqa: E402
from multibody.integrate.energy_momentum import EnergyMomentumStepper, NewtonTolerance  # noqa: E402
from multibody.models.spatial_models import gyro_top, six_body_linkage  # noqa: E402

H = 1e-3


@pytest.mark.parametrize("fast", [True, False], ids=["compiled", "reference"])
@pytest.mark.parametrize("factory", [gyro_top, six_body_linkage], ids=["gyro-top", "six-body-linkage"])
def test_the_extrapolated_start_finds_the_same_step(factory, fast):
    """40 steps; at each, Newton from the stepper's start (the extrapolation wherever its residual is smaller) and
    from dt v_n, lam_n: the same root to the Newton tolerance."""
    model = factory()
    em = EnergyMomentumStepper(model, scheme="constrained", dt=H, condition=False, fast=fast)
    tol = NewtonTolerance().residual
    q, v, taken = model.q0, model.v0, 0
    for k in range(40):
        em._select(q)
        dq, lam, it, extrapolated = em._constrained_newton(q, v, em.previous)
        dq0, lam0, it0, _ = em._constrained_newton(q, v, None)
        assert it >= 0 and it0 >= 0
        taken += extrapolated
        assert np.max(np.abs(dq - dq0)) <= tol * np.max(np.abs(dq0))
        G = em.fast.evaluate(q + 0.5 * dq0)[1][em.rows] if fast else \
            em.ws.constraints(0.0, q + 0.5 * dq0, np.zeros(model.n))[1][em.rows]
        sigma_min = np.linalg.svd(G, compute_uv=False)[-1]
        assert np.max(np.abs(lam - lam0)) <= 10 * tol * em._scale(v, q) / (H * sigma_min)
        q, v = em.step(q, v, k * H)
    assert taken >= 30          # the second-order start is the closer one along a smooth motion


def test_a_failed_extrapolated_start_is_retried_from_the_plain_one():
    """Should Newton fail from the extrapolated start (no convergence or a singular matrix), the step is taken again
    from dt v_n, lam_n; should that fail too, the run stops with a SimulationError naming the model."""
    model = six_body_linkage()
    em = EnergyMomentumStepper(model, scheme="constrained", dt=H, condition=False)
    q, v = em.step(model.q0, model.v0)
    original, starts = em._constrained_newton, []

    def failing(qn, vn, previous, fail_plain=False):
        starts.append(previous is not None)
        if previous is not None:
            raise np.linalg.LinAlgError("singular")
        out = original(qn, vn, None)
        return (out[0], out[1], -1, False) if fail_plain else out

    with mock.patch.object(em, "_constrained_newton", failing):
        q1, v1 = em.step(q, v, H)
    assert starts == [True, False]
    reference = EnergyMomentumStepper(model, scheme="constrained", dt=H, condition=False)
    reference.step(model.q0, model.v0)
    reference.previous = None
    q2, _ = reference.step(q, v, H)
    np.testing.assert_array_equal(q1, q2)
    with mock.patch.object(em, "_constrained_newton", lambda *a: failing(*a, fail_plain=True)):
        with pytest.raises(SimulationError, match="six-body-linkage"):
            em.step(q1, v1, 2 * H)


def test_lu_factors_solve_as_lapack_does():
    """lu_factor / lu_solve (J stored transposed) on random systems of the linkage's size (119): within n eps cond(J)
    of the exact solution, the same factors as scipy.linalg.lu_factor; a singular or non-finite J raises
    LinAlgError as numpy.linalg.solve does."""
    import scipy.linalg as sla
    from multibody.fast.em_constrained_kernels import lu_factor, lu_solve
    rng = np.random.default_rng(5)
    n = 119
    for _ in range(3):
        J = rng.standard_normal((n, n))
        x_true = rng.standard_normal(n)
        F, ipiv, x = np.ascontiguousarray(J.T), np.empty(n, np.int32), np.empty(n)
        lu_factor(F, ipiv)
        lu, piv = sla.lu_factor(J)
        np.testing.assert_array_equal(F.T, lu)
        np.testing.assert_array_equal(ipiv - 1, piv)
        lu_solve(F, ipiv, J @ x_true, x)
        bound = n * np.finfo(float).eps * np.linalg.cond(J)
        assert np.max(np.abs(x - x_true)) <= bound * np.max(np.abs(x_true))
    singular = np.ones((4, 4))
    with pytest.raises(np.linalg.LinAlgError):
        lu_factor(np.ascontiguousarray(singular), np.empty(4, np.int32))
    bad = np.eye(4)
    bad[1, 2] = np.nan
    with pytest.raises(np.linalg.LinAlgError):
        lu_factor(bad, np.empty(4, np.int32))
