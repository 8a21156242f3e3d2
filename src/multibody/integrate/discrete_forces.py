"""Applied forces of the energy-momentum scheme (paper 004 eq. 10) beyond uniform gravity (issue 23).

Eq. (10)_2 reads M (v_{n+1} - v_n) = -dt grad_bar V - dt G^T lam; with forces without potential it
becomes M (v_{n+1} - v_n) = -dt grad_bar V + dt Q_bar - dt G^T lam. Dotting with
q_{n+1} - q_n = dt v_{n+1/2} and using G(q_mid) (q_{n+1} - q_n) = Phi(q_{n+1}) - Phi(q_n) = 0
(quadratic constraints, paper 004 Sect. 1) gives the discrete energy balance

    E_{n+1} - E_n = Q_bar . (q_{n+1} - q_n)        (E = T + V),

so what holds for which element follows from its Q_bar (:mod:`multibody.model.director_forces`):

* gravity (ConstantForce) and spring parts of spring-dampers: grad_bar V is a discrete gradient,
  grad_bar V . dq = V_{n+1} - V_n exactly: energy is conserved to the Newton tolerance (round-off);
* dampers: Q_bar . dq = -c (xi_{n+1} - xi_n)^2 / dt <= 0, exactly the discrete work, so
  E_{n+1} - E_n equals the dampers' discrete work to round-off;
* user forces and torques (SpatialLoads): Q_bar = Q(t_{n+1/2}, q_mid, (q_{n+1} - q_n)/dt), the balance
  holds with their mid-point work Q_bar . dq (a second-order approximation of the exact work);
* momentum maps: springs between two bodies and torsion springs exert equal and opposite loads, so
  they keep the total momenta of a free system; elements attached to the ground and user loads do not;
* drivers (rheonomic rows; constrained scheme only, the reduced scheme's null-space matrices know
  only the pairs): Phi(q_{n+1}, t_{n+1}) = 0 and G(q_mid, t_mid) in (10), so
  E_{n+1} - E_n = Q_bar . dq - lam . G(q_mid, t_mid) dq: the driver's discrete work. For a slide
  driver (time-independent quadratic form minus f(t)) G(q_mid) dq = f(t_{n+1}) - f(t_n) exactly,
  so its work is -lam (f_{n+1} - f_n); for an angle driver the coefficients cos f, sin f are taken
  at t_mid and the work is -lam G(q_mid, t_mid) dq (second-order accurate).
"""
from __future__ import annotations

import numpy as np

from ..errors import MultibodyError
from ..model.forces import ConstantForce

#: complex step of the Jacobians
STEP = 1e-30


class DiscreteForces:
    """The model's forces in the scheme: ``gradV`` (n,) of the constant forces and Q_bar of the
    elements that have ``discrete`` (director_forces); ``__call__(qn, dq, t)`` is batched over the
    leading dimensions of dq and complex-safe."""

    def __init__(self, model, dt: float, scheme: str = "constrained"):
        self.n, self.dt = model.n, float(dt)
        self.gradV = -sum((f.g[:model.n] for f in model.forces if isinstance(f, ConstantForce)), np.zeros(model.n))
        self.elements = [f for f in model.forces if not isinstance(f, ConstantForce)]
        bad = [type(f).__name__ for f in self.elements if not hasattr(f, "discrete")]
        if bad:
            raise MultibodyError(f"model '{model.name}': the energy-momentum scheme takes uniform gravity and the "
                                 f"spatial springs, dampers, forces and torques only, not {', '.join(bad)}.")
        driven = [lab for g in model.constraints if g.motions for lab in g.labels]
        if driven and scheme == "reduced":
            raise MultibodyError(f"model '{model.name}': the reduced energy-momentum scheme does not take drivers "
                                 f"(rows {', '.join(driven)}): its discrete null space knows the pairs only; use "
                                 "--formulation constrained, or lagrange with a Runge-Kutta integrator.")
        self.batched = [f for f in self.elements if type(f).__name__ != "SpatialLoads"]
        self.loads = [f for f in self.elements if type(f).__name__ == "SpatialLoads"]

    def __bool__(self):
        return bool(self.elements)

    def __call__(self, qn, dq, t=0.0):
        """Q_bar (..., n) between qn (n,) and qn + dq (..., n) at the mid-point time t."""
        q0 = np.append(qn, 0.0)
        q1 = np.concatenate([qn + dq, np.zeros(dq.shape[:-1] + (1,), dtype=dq.dtype)], axis=-1)
        out = np.zeros(q1.shape, dtype=q1.dtype)
        for f in self.batched:
            out = out + f.discrete(q0, q1, self.dt)
        for f in self.loads:
            flat = q1.reshape(-1, q1.shape[-1])
            try:
                out = out + np.array([f.discrete(q0.astype(row.dtype), row, self.dt, t) for row in flat]
                                     ).reshape(q1.shape)
            except TypeError as exc:       # e.g. float() of a complex argument
                raise MultibodyError(f"loads {', '.join(f.names)}: under the energy-momentum scheme the load "
                                     "functions must accept complex q and v (complex-step Jacobians; NumPy "
                                     f"functions do): {exc}") from None
        return out[..., :self.n]

    def residual(self, qn, dq, t=0.0):
        """dt (grad V - Q_bar) (..., n), the force part of R_q."""
        if not self.elements:
            return self.dt * self.gradV
        return self.dt * (self.gradV - self(qn, dq, t))

    def jacobian(self, qn, dq, t=0.0):
        """d/d(dq) of dt (grad V - Q_bar) (n, n) by complex step (exact)."""
        if not self.elements:
            return np.zeros((self.n, self.n))
        Q = self(qn, dq + 1j * STEP * np.eye(self.n), t)
        return -self.dt * Q.imag.T / STEP

    def scale(self, qn, vn, t=0.0):
        """dt max |grad V - Q_bar(q_n, q_n + dt v_n)|: the size of the force terms in R_q."""
        return float(np.max(np.abs(self.residual(qn, self.dt * vn, t)), initial=0.0))
