"""Force elements of spatial bodies in director coordinates (paper 004, eqs 16, 21, 36; issue 23).

Generalized forces on q = (phi, d1, d2, d3) follow from the virtual work (the power) of a load:

* a force F at the body point x = phi + X_I d_I (eq. 16, X the body-frame components) has the power
  F . (v_phi + X_I v_I), so its generalized force is

      Q = A(X)^T F = [F; X_1 F; X_2 F; X_3 F],     A(X) = [I, X_1 I, X_2 I, X_3 I]   (3 x 12);

  by eq. (36) P_int^T Q = [F; sum_I d_I x X_I F] = [F; (x - phi) x F]: the force and its moment about
  the centre of mass, as it must be;
* a torque tau has the power tau . omega. With v_I = omega x d_I (eq. 27) the choice
  Q = [0; 1/2 tau x d_1; 1/2 tau x d_2; 1/2 tau x d_3] gives
  sum_I (1/2 tau x d_I) . (omega x d_I) = 1/2 sum_I [(tau.omega)(d_I.d_I) - (tau.d_I)(omega.d_I)]
  = 1/2 (3 - 1) tau . omega = tau . omega for orthonormal directors, and in eq. (36)
  sum_I d_I x (1/2 tau x d_I) = 1/2 (3 tau - tau) = tau (derived here; director formulations of rigid
  bodies: Betsch & Steinmann 2001, paper 004 ref. 5). Any other Q with the same projection differs by
  a vector in range(G_int^T), which the internal constraint forces absorb: the motion is the same;
* the angular velocity of a body is omega = 1/2 sum_I d_I x v_I (from v_I = omega x d_I).

Spring-dampers act along a scalar measure xi(q) of the coordinates of two bodies (the distance l of two
points, or the relative angle delta of a revolute or cylindrical pair): with tension
T = k (xi - xi0) + c xi', Q = -T grad xi and V = 1/2 k (xi - xi0)^2. For the energy-momentum scheme
(paper 004 eq. 10) each element also gives a discrete force with a discrete gradient of xi
(``grad_bar . (q_{n+1} - q_n) = xi_{n+1} - xi_n``):

    Q_bar = -(k ((xi_n + xi_{n+1})/2 - xi0) + c (xi_{n+1} - xi_n)/dt) grad_bar xi,

so that Q_bar . (q_{n+1} - q_n) = -(V_{n+1} - V_n) - c (xi_{n+1} - xi_n)^2 / dt exactly: the spring
conserves and the damper dissipates exactly its discrete work. For the distance, l^2 is quadratic in q,
so grad_bar l = grad(l^2)(q_mid) / (l_n + l_{n+1}) (the mid-point formula of a quadratic, Gonzalez 1996);
for the angle the general (mid-point) discrete gradient of Gonzalez (J. Nonlinear Sci. 6, 1996):
grad xi(q_mid) + (xi_{n+1} - xi_n - grad xi(q_mid) . dq) / |dq|^2 dq.
All of it is vectorised over the elements of one kind and complex-safe (complex-step Jacobians).
"""
from __future__ import annotations

from dataclasses import dataclass, field

import numpy as np

from ..errors import ModelError
from .forces import ForceElement, _scatter


def _einsum_rows(a, b):
    return np.einsum("...i,...i->...", a, b)


def _frames(x):
    """phi (..., 3) and D (..., 3, 3) (D[..., :, I] = d_I) of body coordinates x (..., 12)."""
    return x[..., :3], np.swapaxes(x[..., 3:].reshape(x.shape[:-1] + (3, 3)), -1, -2)


def _scatter_matrix(cols: np.ndarray, size: int) -> np.ndarray:
    """One-hot (k * w, size) matrix S with Q.ravel() @ S the scatter of Q (k, w) into size entries
    (batched and complex-safe, unlike bincount)."""
    S = np.zeros((cols.size, size))
    S[np.arange(cols.size), cols.ravel()] = 1.0
    return S


@dataclass(frozen=True)
class MeasuredElements(ForceElement):
    """k spring-dampers along a scalar measure xi of x = qe[cols] + base (k, 24): parent then child
    coordinates (the ground's columns are the dummy column n and its base the ground frame GROUND_Q).
    Subclasses define ``measure(x) -> (xi, grad)`` and may override ``discrete_gradient``."""

    names: tuple[str, ...]
    cols: np.ndarray
    base: np.ndarray
    stiffness: np.ndarray = field(kw_only=True)
    damping: np.ndarray = field(kw_only=True)
    free: np.ndarray = field(kw_only=True)

    @property
    def damped(self) -> bool:
        return bool(np.any(self.damping != 0))

    def measure(self, x):  # pragma: no cover - abstract
        raise NotImplementedError

    def tension(self, t, qe, ve):
        """xi (k,), xi' (k,), tension T (k,) and grad xi (k, 24) at a state."""
        xi, grad = self.measure(qe[self.cols] + self.base)
        rate = _einsum_rows(grad, ve[self.cols])
        return xi, rate, self.stiffness * (xi - self.free) + self.damping * rate, grad

    def generalized(self, t, qe, ve):
        _, _, T, grad = self.tension(t, qe, ve)
        return _scatter(self.cols, -T[:, None] * grad, len(qe))

    def potential(self, t, qe) -> float:
        xi, _ = self.measure(qe[self.cols] + self.base)
        return float(0.5 * np.sum(self.stiffness * (xi - self.free) ** 2))

    def discrete_gradient(self, x0, x1):
        """xi_n, xi_{n+1} (..., k) and Gonzalez's discrete gradient (..., k, 24):
        grad xi(x_mid) + (xi_1 - xi_0 - grad xi(x_mid) . dx) / (dx . dx) dx."""
        (xi0, _), (xi1, _), (_, gm) = self.measure(x0), self.measure(x1), self.measure(0.5 * (x0 + x1))
        dx = x1 - x0
        den = _einsum_rows(dx, dx)
        zero = den.real == 0
        corr = (xi1 - xi0 - _einsum_rows(gm, dx)) / np.where(zero, 1.0, den)
        return xi0, xi1, gm + np.where(zero, 0.0, corr)[..., None] * dx

    def discrete(self, q0e, q1e, dt):
        """Q_bar (..., n + 1) between q0e and q1e (..., n + 1) (module docstring)."""
        xi0, xi1, gbar = self.discrete_gradient(q0e[..., self.cols] + self.base, q1e[..., self.cols] + self.base)
        T = self.stiffness * (0.5 * (xi0 + xi1) - self.free) + self.damping * (xi1 - xi0) / dt
        Q = -T[..., None] * gbar
        S = _scatter_matrix(self.cols, q0e.shape[-1])
        return Q.reshape(Q.shape[:-2] + (-1,)) @ S


@dataclass(frozen=True)
class SpatialSpringDampers(MeasuredElements):
    """Linear spring-dampers between body points: xi = l = |p2 - p1| with p2 - p1 = B x, B (k, 3, 24)
    the maps phi + X_I d_I of the two points (eq. 16); grad l = B^T u, u = (p2 - p1)/l."""

    B: np.ndarray = field(kw_only=True)

    def measure(self, x):
        d = np.einsum("kij,...kj->...ki", self.B, x)
        length = np.sqrt(_einsum_rows(d, d))
        return length, np.einsum("kij,...ki->...kj", self.B, d / length[..., None])

    def discrete_gradient(self, x0, x1):
        """l^2 = d.d is quadratic in x: grad_bar l = B^T (d_0 + d_1) / (l_0 + l_1) is exact."""
        d0, d1 = (np.einsum("kij,...kj->...ki", self.B, x) for x in (x0, x1))
        l0, l1 = np.sqrt(_einsum_rows(d0, d0)), np.sqrt(_einsum_rows(d1, d1))
        return l0, l1, np.einsum("kij,...ki->...kj", self.B, (d0 + d1) / (l0 + l1)[..., None])


@dataclass(frozen=True)
class RotationalSpringDampers(MeasuredElements):
    """Torsion spring-dampers about the axis n of R and C pairs: xi = delta = theta - theta_free, the
    angle from r (parent-fixed, perpendicular to n, at theta_free) to a (child-fixed, perpendicular
    to n) about n. s = a . w (w = n x r) and c = a . r are bilinear in the two bodies' directors,
    i.e. quadratic forms 1/2 x^T H_s x, 1/2 x^T H_c x of x (24,) (H (k, 2, 24, 24), the forms of the
    angle driver, director_drivers), so delta = 2 atan(s / (sqrt(s^2 + c^2) + c)) in (-pi, pi)
    (a complex-safe atan2) and grad delta = (c H_s x - s H_c x) / (s^2 + c^2)."""

    H: np.ndarray = field(kw_only=True)

    def measure(self, x):
        Hx = self.H @ x[..., None, :, None]                                      # (..., k, 2, 24, 1)
        sc = 0.5 * (x[..., None, None, :] @ Hx)[..., 0, 0]                       # (..., k, 2)
        s, c, Hx = sc[..., 0], sc[..., 1], Hx[..., 0]
        rho2 = s * s + c * c
        delta = 2 * np.arctan(s / (np.sqrt(rho2) + c))
        return delta, ((c / rho2)[..., None] * Hx[..., 0, :] - (s / rho2)[..., None] * Hx[..., 1, :])


@dataclass(frozen=True)
class SpatialLoads(ForceElement):
    """User forces F(t, q, v) -> (3,) at body points and torques tau(t, q, v) -> (3,) (global
    components), generalized by Q = A(X)^T F and Q_I = 1/2 tau x d_I (module docstring). One Python
    call per user function is unavoidable; the assembly of Q is vectorised."""

    names: tuple[str, ...]
    funs: tuple
    kinds: tuple[str, ...]          # "force" | "torque" per element
    cols: np.ndarray                # (k, 12) the body's columns
    X: np.ndarray                   # (k, 3) body-frame point (forces; zero for torques)
    n: int = field(kw_only=True)
    #: user loads need not derive from a potential (simulation.assemble.nonconservative)
    forced = True

    def values(self, t, qe, ve) -> np.ndarray:
        """The loads (k, 3) at a state; a wrong shape or a non-finite value names the element."""
        q, v = qe[..., : self.n], ve[..., : self.n]
        out = []
        for name, kind, fun in zip(self.names, self.kinds, self.funs):
            val = np.asarray(fun(t, q, v))
            if val.shape != (3,) or not np.all(np.isfinite(val)):
                raise ModelError(f"{kind} '{name}': the function must return 3 finite global components "
                                 f"(fx, fy, fz), got {np.array2string(np.asarray(val), threshold=6)} of shape "
                                 f"{val.shape} at t = {t:g}.")
            out.append(val)
        return np.array(out)

    def _generalized_of(self, L, x):
        """Q (k, 12) of the loads L (k, 3) on bodies with coordinates x (k, 12)."""
        _, D = _frames(x)
        torque = np.array([k == "torque" for k in self.kinds])
        force_part = np.concatenate([L] + [self.X[:, I, None] * L for I in range(3)], axis=-1)
        torque_part = np.concatenate([np.zeros_like(L)] + [0.5 * np.cross(L, D[..., :, I]) for I in range(3)],
                                     axis=-1)
        return np.where(torque[:, None], torque_part, force_part)

    def generalized(self, t, qe, ve):
        Q = self._generalized_of(self.values(t, qe, ve), qe[self.cols])
        return _scatter(self.cols, Q, len(qe))

    def discrete(self, q0e, q1e, dt, t=0.0):
        """The loads at the mid-point (t, q_mid, v_mid = (q1 - q0)/dt), unbatched (user functions)."""
        qm, vm = 0.5 * (q0e + q1e), (q1e - q0e) / dt
        out = np.zeros(qm.shape, dtype=qm.dtype)
        np.add.at(out, self.cols, self._generalized_of(self.values(t, qm, vm), qm[self.cols]))
        return out


__all__ = ["MeasuredElements", "SpatialSpringDampers", "RotationalSpringDampers", "SpatialLoads"]
