"""The compiled attempts of an adaptive Runge-Kutta step (multibody.fast.rk_kernels, integrate.explicit_compiled;
issue 16) take the steps of the reference RungeKutta (integrate.explicit) on the same formulation.

Both evaluate the same right-hand side and error filter kernels and the same formulas for the stages, the error
norm and the step-size controller; they differ only in the summation order of the stage combinations (round-off,
eps per step). So the step sequences agree and the states agree to round-off amplified over the run:
STATE_AGREEMENT (1e-9 relative to the state's size over 0.3-1 s at rtol 1e-6, a million times eps per step)
is asserted, and the same numbers of accepted and rejected steps.
"""
from __future__ import annotations

import numpy as np
import pytest

pytest.importorskip("numba")

from multibody import RunOptions  # noqa: E402
from multibody.formulations.lagrange import Lagrange  # noqa: E402
from multibody.integrate.explicit import RungeKutta  # noqa: E402
from multibody.integrate.explicit_compiled import CompiledRungeKutta  # noqa: E402
from multibody.integrate.steppers import STEPPERS  # noqa: E402
from multibody.kinematics import consistent_state  # noqa: E402
from multibody.models import MODELS  # noqa: E402
from multibody.simulation.driver import advance  # noqa: E402
from test_generalized_alpha import chain  # noqa: E402

STATE_AGREEMENT = 1e-9


def integrate(model, t_end, compiled: bool, rtol=1e-6):
    """(steps accepted, rejected, final y, stepper) of a run through the driver's advance (projection after
    each step), with the compiled stepper or the reference RungeKutta on the same compiled formulation."""
    form = Lagrange(model)
    q, v = consistent_state(model, 0.0, ws=form.ws)
    y = form.initial_state(0.0, q, v)
    o = RunOptions(rtol=rtol, atol=rtol * 1e-2)
    if compiled:
        rk = STEPPERS["dopri5"].make(form, 0.0, y, t_end, o)
    else:
        rk = RungeKutta(form.rhs, 0.0, y, t_end, tableau="dopri5", rtol=o.rtol, atol=o.atol,
                        error_filter=form.error_filter)
    while rk.t < t_end:
        step, y_new, _ = advance(model, form, rk)
        if y_new is not None:
            rk.reset(step.t, y_new)
    return rk.n_accepted, rk.n_rejected, rk.y, rk


@pytest.mark.parametrize("model, t_end", [(chain(10), 1.0), (chain(10, 0.0), 1.0), (chain(60), 0.3)],
                         ids=["chain-10-tip", "chain-10-free", "chain-60-sparse"])
def test_compiled_attempts_take_the_reference_steps(model, t_end):
    a, r, y, rk = integrate(model, t_end, compiled=True)
    a_ref, r_ref, y_ref, _ = integrate(model, t_end, compiled=False)
    assert isinstance(rk, CompiledRungeKutta)
    assert (a, r) == (a_ref, r_ref) and r > 0          # rejections exercised too
    assert np.abs(y - y_ref).max() < STATE_AGREEMENT * np.abs(y_ref).max()


def test_handed_back_attempts_near_singular_configurations(monkeypatch):
    """The double four-bar passes its singular configurations (t = pi/2 s, ...): there the compiled error filter
    declines (A A^T ill-conditioned) and the attempt's error is judged by the reference filter; the runs agree."""
    model, handed = MODELS["double-four-bar"].factory(), []
    reference = RungeKutta._error_norm

    def counted(self, *args):
        handed.append(type(self) is CompiledRungeKutta)
        return reference(self, *args)
    monkeypatch.setattr(RungeKutta, "_error_norm", counted)
    a, r, y, rk = integrate(model, 4.0, compiled=True)
    assert any(handed)
    a_ref, r_ref, y_ref, _ = integrate(model, 4.0, compiled=False)
    assert isinstance(rk, CompiledRungeKutta)
    assert (a, r) == (a_ref, r_ref)
    assert np.abs(y - y_ref).max() < STATE_AGREEMENT * np.abs(y_ref).max()


def test_not_applicable_keeps_the_reference_stepper():
    """Fixed steps, DOP853 (two error estimates), the NumPy path, driven models: RungeKutta itself."""
    model = chain(10)
    form, slow = Lagrange(model), Lagrange(model, fast=False)
    y = form.initial_state(0.0, model.q0, model.v0)
    for f, name, o in [(form, "rk4", RunOptions(integrator="rk4", step=1e-3)), (form, "dop853", RunOptions()),
                       (slow, "dopri5", RunOptions())]:
        assert type(STEPPERS[name].make(f, 0.0, y, 1.0, o)) is RungeKutta
    driven = Lagrange(MODELS["slider-crank"].factory())         # a prescribed crank motion
    assert driven.fast_rhs.motions
    yd = driven.initial_state(0.0, driven.model.q0, driven.model.v0)
    assert type(STEPPERS["dopri5"].make(driven, 0.0, yd, 1.0, RunOptions())) is RungeKutta
