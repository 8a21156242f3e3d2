"""The work W(t) of drivers and non-conservative forces along a run, for the energy balance
E(t) - E(t0) - W(t) of driven, damped or forced models (issue 13 item 7): zero up to the integration
error, so its size says how accurate the run is, where the energy drift of such a model says nothing.

Power at a state (constant M, equations M q'' + C^T lam = f with C = [Phi_q; Psi]):
d/dt (1/2 v^T M v + V) = v.f - lam.(C v) + dV/dt = (v.f + grad V.v) + lam.b, since C v + b = 0
(b = [Phi_t; psi_t]): the power of the applied forces that have no potential plus that of the
constraint forces, which only rheonomic rows (drivers) make non-zero (paper 000 eq. 3 for the
multipliers' sign; paper 002 Sect. 2 for the energy of a constrained system). W is integrated on each
accepted step with 3-point Gauss-Legendre quadrature on the integrator's dense output (exact to
degree 5, below the dense output's own order-4/5 error).
"""
from __future__ import annotations

import numpy as np

from ..model.forces import ConstantForce

#: formulations whose multipliers give the constraint power lam . b
BALANCED = ("lagrange", "projection")
#: Gauss-Legendre nodes and weights on [0, 1]
_NODES = 0.5 + 0.5 * np.array([-np.sqrt(0.6), 0.0, np.sqrt(0.6)])
_WEIGHTS = np.array([5.0, 8.0, 5.0]) / 18.0


def needs_balance(model, form, t0, q0) -> bool:
    """True for the formulations whose multipliers solve M q'' + C^T lam = f (lagrange, projection: checked
    on the driven slider-crank, balance 4e-3 at rtol 1e-6 falling to 2e-6 at 1e-9) on a model with a
    constant mass matrix that is driven (Phi_t != 0 at the start) or has forces other than uniform gravity
    and potentials. The multipliers that nullspace and minimal report do not balance the work there."""
    if form.name not in BALANCED or model.mass_matrix is None:
        return False
    driven = model.m > 0 and np.any(form.ws.velocity_constraints(t0, q0, np.zeros(model.n))[2] != 0)
    forced = any(not isinstance(e, ConstantForce) and type(e).__name__ != "_UserPotential" for e in model.forces)
    return bool(driven or forced)


class WorkIntegral:
    """W(t) of one segment: ``at(step, s)`` the work up to s in (t_old, t] of an accepted step,
    ``advance(step)`` after the step; None from ``at`` when the formulation gives no multipliers."""

    def __init__(self, model, form):
        self.model, self.form, self.ws, self.W = model, form, form.ws, 0.0

    def power(self, t, y) -> float | None:
        q, v = self.form.split(t, y)
        lam = self.form.accelerations(t, q, v).multipliers
        if lam is None:
            return None
        b = self.ws.velocity_constraints(t, q, v)[2]
        h = 1e-6 * max(1.0, float(np.max(np.abs(q), initial=0.0))) / max(float(np.max(np.abs(v), initial=0.0)), 1e-300)
        dV = (self.ws.potential(t, q + h * v) - self.ws.potential(t, q - h * v)) / (2 * h)
        return float(v @ self.ws.forces(t, q, v) + dV + np.nan_to_num(lam) @ b)

    def _integral(self, step, a, b) -> float | None:
        if b <= a:
            return 0.0
        ps = [self.power(s, step.dense(s)) for s in a + (b - a) * _NODES]
        return None if any(p is None for p in ps) else float((b - a) * (_WEIGHTS @ np.array(ps)))

    def at(self, step, s) -> float | None:
        w = self._integral(step, step.t_old, s)
        return None if w is None else self.W + w

    def advance(self, step) -> None:
        w = self._integral(step, step.t_old, step.t)
        self.W = np.nan if w is None else self.W + w
