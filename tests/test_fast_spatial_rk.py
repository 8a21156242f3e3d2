"""The compiled attempts of an adaptive Runge-Kutta step on spatial director models (multibody.fast.spatial_rk_kernels,
integrate.explicit_compiled; issue 16) take the steps of the reference RungeKutta (integrate.explicit) on the same
formulation.

Both evaluate the same right-hand side and error filter kernels (fast.spatial_step_kernels) and the same formulas for
the stages, the error norm and the step-size controller; they differ only in the summation order of the stage
combinations (round-off, eps per step). So the step sequences agree and the states agree to round-off amplified over
the run: STATE_AGREEMENT (1e-9 relative to the state's size, a million times eps per step over a few hundred steps)
is asserted, and the same numbers of accepted and rejected steps.
"""
from __future__ import annotations

import numpy as np
import pytest

pytest.importorskip("numba")

from multibody import RunOptions  # noqa: E402
from multibody.fast.spatial_rk import SpatialAttempts  # noqa: E402
from multibody.formulations.lagrange import Lagrange  # noqa: E402
from multibody.integrate.explicit import RungeKutta  # noqa: E402
from multibody.integrate.explicit_compiled import CompiledRungeKutta  # noqa: E402
from multibody.integrate.steppers import STEPPERS  # noqa: E402
from multibody.models.spatial_models import gyro_top, six_body_linkage  # noqa: E402
from multibody.simulation.driver import advance  # noqa: E402
from test_fast_rk import integrate as planar_integrate  # noqa: E402

STATE_AGREEMENT = 1e-9


def integrate(model, t_end, compiled: bool, rtol):
    """test_fast_rk.integrate (a run through the driver's advance, compiled stepper or the reference RungeKutta on the
    same compiled formulation), with the formulation (the reference stepper's fun is its bound rhs)."""
    a, r, y, rk = planar_integrate(model, t_end, compiled, rtol)
    return a, r, y, rk, rk.form if compiled else rk.fun.__self__


@pytest.mark.parametrize("factory, t_end, rtol", [(six_body_linkage, 0.05, 1e-10), (six_body_linkage, 0.2, 1e-6),
                                                  (gyro_top, 0.3, 1e-8)],
                         ids=["linkage-1e-10", "linkage-1e-6", "gyro-top"])
def test_compiled_spatial_attempts_take_the_reference_steps(factory, t_end, rtol):
    a, r, y, rk, form = integrate(factory(), t_end, True, rtol)
    a_ref, r_ref, y_ref, _, form_ref = integrate(factory(), t_end, False, rtol)
    assert isinstance(rk, CompiledRungeKutta) and isinstance(rk.compiled, SpatialAttempts)
    assert (a, r) == (a_ref, r_ref)
    assert np.abs(y - y_ref).max() < STATE_AGREEMENT * np.abs(y_ref).max()
    assert form.nfev == form_ref.nfev and form.fast_rhs.paths == form_ref.fast_rhs.paths


def test_rejected_attempts_take_the_reference_steps():
    """A first step far too large for rtol 1e-10: the compiled call rejects and shrinks it as the reference does."""
    model = six_body_linkage()
    runs = []
    for compiled in (True, False):
        form = Lagrange(model)
        y = form.initial_state(0.0, model.q0, model.v0)
        kw = dict(tableau="dopri5", rtol=1e-10, atol=1e-12)
        rk = CompiledRungeKutta(form, 0.0, y, 0.02, **kw) if compiled else \
            RungeKutta(form.rhs, 0.0, y, 0.02, error_filter=form.error_filter, **kw)
        rk.h = 1e-2
        step = rk.step()
        runs.append((rk.n_rejected, step.t, step.y, rk.h))
    (rej, t, y, h), (rej_ref, t_ref, y_ref, h_ref) = runs
    assert rej == rej_ref and rej > 0 and t == pytest.approx(t_ref, rel=1e-14) and h == pytest.approx(h_ref, rel=1e-9)
    assert np.abs(y - y_ref).max() < STATE_AGREEMENT * np.abs(y_ref).max()


def test_declined_solves_are_handed_back(monkeypatch):
    """Where the compiled Schur solve declines (here: every evaluation, by a pivot threshold no factor meets) the
    attempt is made by the reference loop, whose right-hand side takes the reference (SVD) solve: the run goes on
    with the reference's numbers."""
    model = six_body_linkage()
    form = Lagrange(model)
    form.fast_rhs.mass = form.fast_rhs.mass[:4] + (2.0,)     # min L_jj^2 / max S_jj <= 1: the Schur solve declines
    y = form.initial_state(0.0, model.q0, model.v0)
    rk = STEPPERS["dopri5"].make(form, 0.0, y, 0.01, RunOptions(rtol=1e-8, atol=1e-10))
    step = rk.step()
    assert isinstance(rk, CompiledRungeKutta) and step.t > 0.0
    assert form.fast_rhs.paths[0] == 0 and form.fast_rhs.paths[1] == form.nfev


def test_not_applicable_keeps_the_reference_stepper():
    """DOP853 (two error estimates) and the NumPy path of the spatial model: RungeKutta itself."""
    model = six_body_linkage()
    form, slow = Lagrange(model), Lagrange(model, fast=False)
    y = form.initial_state(0.0, model.q0, model.v0)
    assert type(STEPPERS["dopri5"].make(form, 0.0, y, 1.0, RunOptions())) is CompiledRungeKutta
    for f, name in [(form, "dop853"), (slow, "dopri5")]:
        assert type(STEPPERS[name].make(f, 0.0, y, 1.0, RunOptions())) is RungeKutta


def test_dense_mass_path_takes_the_reference_steps():
    """The kernel's path for a non-diagonal mass matrix (spatial_kernels.lagrange_rhs with M^-1 dense; every spatial
    model here has a diagonal M, so the flag is forced on the gyro top): the same steps as the reference loop on
    the same right-hand side, and the same motion as the diagonal path to the integration tolerance."""
    runs = []
    for compiled, dense in ((True, True), (False, True), (True, False)):
        model = gyro_top()
        form = Lagrange(model)
        if dense:
            form.fast_rhs.mass = form.fast_rhs.mass[:2] + (False,) + form.fast_rhs.mass[3:]
        y = form.initial_state(0.0, model.q0, model.v0)
        kw = dict(tableau="dopri5", rtol=1e-8, atol=1e-10)
        rk = CompiledRungeKutta(form, 0.0, y, 0.1, **kw) if compiled else \
            RungeKutta(form.rhs, 0.0, y, 0.1, error_filter=form.error_filter, **kw)
        while rk.t < 0.1:
            step, y_new, _ = advance(model, form, rk)
            if y_new is not None:
                rk.reset(step.t, y_new)
        runs.append((rk.n_accepted, rk.n_rejected, rk.y))
    (a, r, y), (a_ref, r_ref, y_ref), (_, _, y_diag) = runs
    assert (a, r) == (a_ref, r_ref)
    assert np.abs(y - y_ref).max() < STATE_AGREEMENT * np.abs(y_ref).max()
    assert np.abs(y - y_diag).max() < 1e-6 * np.abs(y_ref).max()
