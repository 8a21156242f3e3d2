"""The compiled evaluation of the spatial director models (multibody.fast.spatial) reproduces the NumPy reference:
the constraint values, Jacobian and gamma of :class:`~multibody.model.director.QuadraticConstraints` (Workspace),
the geometric stiffness sum_k lam_k Phi_k,qq, and the constrained energy-momentum step (paper 004 eq. 10).

Both evaluate the same polynomials (paper 004: every row at most quadratic) in another summation order, and the
Newton iterations solve the same equations to the same tolerance, so they differ by round-off: ROUND_OFF relative
(as tests/test_fast.py), or the Newton tolerance for the stepped states.
"""
from __future__ import annotations

import numpy as np
import pytest

pytest.importorskip("numba")

from multibody.assembly import Workspace  # noqa: E402
from multibody.fast.spatial import spatial_supported, spatial_workspace  # noqa: E402
from multibody.integrate.energy_momentum import EnergyMomentumStepper  # noqa: E402
from multibody.models.spatial_models import gyro_top, six_body_linkage  # noqa: E402

ROUND_OFF = 1e-12


@pytest.fixture(params=[gyro_top, six_body_linkage], ids=["gyro-top", "six-body-linkage"])
def model(request):
    return request.param()


def test_constraints_and_gamma_match_the_workspace(model):
    rng = np.random.default_rng(0)
    fast, ref = spatial_workspace(model), Workspace(model)
    assert fast is not None
    for _ in range(3):
        q, v = model.q0 + 0.1 * rng.standard_normal(model.n), rng.standard_normal(model.n)
        for a, b in zip(fast.constraints(0.0, q, v), ref.constraints(0.0, q, v)):
            assert np.max(np.abs(a - b)) <= ROUND_OFF * max(1.0, np.max(np.abs(b)))


def test_geometric_stiffness_matches_the_reference(model):
    lam = np.random.default_rng(1).standard_normal(model.m)
    fast, ref = (EnergyMomentumStepper(model, scheme="constrained", dt=1e-3, fast=f) for f in (True, False))
    fast.rows = ref.rows = np.arange(model.m)
    assert np.max(np.abs(fast.fast.hessian_sum(lam) - ref._hessian(lam))) <= ROUND_OFF * np.max(np.abs(lam))


def test_compiled_constrained_steps_match_the_reference(model):
    """Ten steps of eq. (10): the same states to the Newton tolerance (1e-13 relative) times the steps. The iteration
    counts may differ by one: each step starts from the first-order guess or the extrapolation, whichever has the
    smaller scaled residual, and where the two tie to round-off the choice is round-off's (the six-body linkage's
    second step: the dynamic rows dominate both, 8.679149657780685e-3 against 8.679149657780577e-3 of the scale, so
    the compiled and the NumPy step took different starts under the Haswell and Prescott kernels, 3 and 2
    iterations); both starts converge to the same root (fast.em_constrained_kernels), which the states check."""
    fast, ref = (EnergyMomentumStepper(model, scheme="constrained", dt=1e-3, fast=f) for f in (True, False))
    assert fast.fast is not None and ref.fast is None
    (qa, va), (qb, vb) = (model.q0, model.v0), (model.q0, model.v0)
    for k in range(10):
        qa, va = fast.step(qa, va, k * 1e-3)
        qb, vb = ref.step(qb, vb, k * 1e-3)
        assert abs(fast.iterations - ref.iterations) <= 1
    vscale = max(1.0, np.max(np.abs(vb)))
    assert np.max(np.abs(qa - qb)) <= 1e-11 * max(1.0, model.length_scale)
    assert np.max(np.abs(va - vb)) <= 1e-9 * vscale
    la, lb = fast.multipliers, ref.multipliers          # NaN on the redundant rows of the linkage
    assert np.array_equal(np.isnan(la), np.isnan(lb))
    assert np.nanmax(np.abs(la - lb)) <= 1e-8 * max(1.0, np.nanmax(np.abs(lb)))
    assert fast.condition == pytest.approx(ref.condition, rel=1e-6)


def test_unsupported_models_say_why():
    from multibody.models import MODELS
    assert "constraint groups" in spatial_supported(MODELS["double-four-bar"].factory())


def test_compiled_lagrange_rhs_matches_the_reference(model):
    """The Schur solve of the compiled right-hand side and the reference Gauss solve (SVD) agree to round-off,
    on the linkage with its redundant row left out by the formulation's row choice."""
    from multibody.fast.spatial_lagrange import SpatialLagrangeRhs
    from multibody.formulations.lagrange import Lagrange
    fast, ref = Lagrange(model), Lagrange(model, fast=False)
    assert isinstance(fast.fast_rhs, SpatialLagrangeRhs) and ref.fast_rhs is None and fast.fast_step.spatial
    rng = np.random.default_rng(2)
    for k in range(3):
        y = np.r_[model.q0, model.v0 + 0.1 * k * rng.standard_normal(model.n)]
        fast.initial_state(0.0, y[:model.n], y[model.n:]), ref.initial_state(0.0, y[:model.n], y[model.n:])
        a, b = fast.rhs(0.0, y), ref.rhs(0.0, y)
        assert np.max(np.abs(a - b)) <= ROUND_OFF * np.max(np.abs(b))
    assert fast.fast_rhs.paths == [3, 0]


def test_compiled_lagrange_run_agrees_with_the_reference():
    """dopri5 at rtol 1e-10 on the six-body linkage: both paths integrate the same equations, so the end states
    agree to the integration tolerance (the step sequences may differ by round-off)."""
    from multibody.simulation import RunOptions, simulate
    m = six_body_linkage()
    opts = dict(t_end=0.02, options=RunOptions(rtol=1e-10, atol=1e-12))
    fast = simulate(m, **opts)
    ref = simulate(m, formulation_options={"fast": False}, **opts)
    assert fast.summary["backend"] == "compiled" and ref.summary["backend"] == "numpy"
    qa, qb = fast.series["q"].data[-1], ref.series["q"].data[-1]
    assert np.max(np.abs(qa - qb)) <= 1e-8 * max(1.0, m.length_scale)


def test_cold_cache_under_the_background_policy_takes_the_reference(monkeypatch):
    """The CLI's cold-start policy (fast.warm): this run on the NumPy path, the kernels compiled in a detached
    process (not started here: Popen is replaced)."""
    from multibody.fast import spatial_warm, warm
    from multibody.fast.spatial import quadratic_table
    started = []
    monkeypatch.setattr(spatial_warm, "cache_is_cold", lambda: True)
    monkeypatch.setattr(warm.subprocess, "Popen", lambda *a, **k: started.append(a))
    monkeypatch.setattr(spatial_warm, "_state", {"started": False, "announced": False})
    with warm.cold_start("background"):
        assert quadratic_table(gyro_top()) is None
    assert len(started) == 1
    assert quadratic_table(gyro_top()) is not None      # the library's "wait": compile (here: cached) and use
