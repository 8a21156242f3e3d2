"""Holonomic constraint groups, each evaluated for all its joints at once (no Python loop per joint).

Every group of r rows returns, at a state (t, q, v):

- ``phi`` (r,): the constraint residual Phi(q, t);
- ``jac`` (r, w): the nonzero entries of the Jacobian A = Phi_q in a fixed pattern ``cols`` (r, w)
  (column ``n`` is the dummy "ground" column, dropped by the assembly); a fixed pattern is what a
  sparse assembly needs later;
- ``phi_t`` (r,): dPhi/dt at fixed q;
- ``gamma`` (r,): the right-hand side of the acceleration equation A q'' = gamma,
  gamma = -(A q')_q q' - 2 A_t q' - Phi_tt  (paper 000 eq. 6; paper 003 eq. 9).

Joints are compositions of four primitives (built in :mod:`.builder`):

=================  ======================================  =====================================
primitive          Phi                                     used by
=================  ======================================  =====================================
Coincident         p_i - p_j                                revolute, weld
Distance           (|p_i - p_j|^2 - L^2) / (2 L)            distance (rod)
Angle              theta_b - theta_a - c - f(t)             prismatic, weld, revolute driver
LineProjection     e_a . (p_j - p_i) - c - f(t)             prismatic, prismatic driver
CoordinateDriver   q_k - f(t)                               coordinate driver
=================  ======================================  =====================================

with p a marker point, e_a a unit vector fixed in body a, f(t) an optional prescribed motion. The
derivatives follow from the marker values by the product rule (see each class).
"""
from __future__ import annotations

from dataclasses import dataclass, field

import numpy as np

from .markers import MarkerSet
from .motion import Motion


@dataclass(frozen=True)
class ConstraintValues:
    phi: np.ndarray
    jac: np.ndarray
    phi_t: np.ndarray
    gamma: np.ndarray


@dataclass(frozen=True)
class ConstraintGroup:
    """Base: ``labels`` (r,) row labels "joint.component", ``cols`` (r, w) Jacobian pattern,
    ``motions``: (row, Motion) pairs for rows with a prescribed motion, ``joints``: joint name of each row."""

    labels: tuple[str, ...]
    cols: np.ndarray
    motions: tuple[tuple[int, Motion], ...] = field(default=(), kw_only=True)

    @property
    def rows(self) -> int:
        return len(self.labels)

    def evaluate(self, t: float, qe: np.ndarray, ve: np.ndarray) -> ConstraintValues:
        phi, jac, gamma = self._evaluate(qe, ve)
        phi_t = np.zeros(self.rows)
        for row, motion in self.motions:     # only driven rows; drivers are few
            f, df, ddf = motion(t)
            phi[row] -= f
            phi_t[row] -= df
            gamma[row] += ddf
        return ConstraintValues(phi, jac, phi_t, gamma)

    def _evaluate(self, qe, ve):  # pragma: no cover - abstract
        raise NotImplementedError


def _pair_cols(a: MarkerSet, b: MarkerSet) -> np.ndarray:
    """(k, 6) columns: the 3 body columns of marker set a, then those of b."""
    return np.concatenate([a.cols, b.cols], axis=1)


@dataclass(frozen=True)
class Coincident(ConstraintGroup):
    """Phi = p_i - p_j (2 rows per joint: x, y). gamma = -(conv_i - conv_j)."""

    pi: MarkerSet = field(kw_only=True)
    pj: MarkerSet = field(kw_only=True)

    def _evaluate(self, qe, ve):
        a, b = self.pi.evaluate(qe, ve), self.pj.evaluate(qe, ve)
        phi = (a.pos - b.pos).ravel()
        jac = np.concatenate([a.jac, -b.jac], axis=2).reshape(-1, 6)
        gamma = -(a.conv - b.conv).ravel()
        return phi, jac, gamma


@dataclass(frozen=True)
class Distance(ConstraintGroup):
    """Phi = (d.d - L^2)/(2L), d = p_i - p_j: a residual in length units.

    Phi_q = d^T (J_i, -J_j) / L;  gamma = -(d'.d' + d.(conv_i - conv_j)) / L.
    """

    pi: MarkerSet = field(kw_only=True)
    pj: MarkerSet = field(kw_only=True)
    length: np.ndarray = field(kw_only=True)

    def _evaluate(self, qe, ve):
        a, b = self.pi.evaluate(qe, ve), self.pj.evaluate(qe, ve)
        L = self.length
        d, dd = a.pos - b.pos, a.vel - b.vel
        phi = (np.einsum("ki,ki->k", d, d) - L * L) / (2 * L)
        jac = np.einsum("ki,kic->kc", d, np.concatenate([a.jac, -b.jac], axis=2)) / L[:, None]
        gamma = -(np.einsum("ki,ki->k", dd, dd) + np.einsum("ki,ki->k", d, a.conv - b.conv)) / L
        return phi, jac, gamma


@dataclass(frozen=True)
class Angle(ConstraintGroup):
    """Phi = theta_b - theta_a - c - f(t); ``cols`` (k, 2) = (theta_a, theta_b). gamma = f''."""

    offset: np.ndarray = field(kw_only=True)

    def _evaluate(self, qe, ve):
        th = qe[self.cols]
        phi = th[:, 1] - th[:, 0] - self.offset
        jac = np.empty(self.cols.shape)
        jac[:, 0], jac[:, 1] = -1.0, 1.0
        return phi, jac, np.zeros(len(phi))


@dataclass(frozen=True)
class LineProjection(ConstraintGroup):
    """Phi = e.(p_j - p_i) - c - f(t), e a unit vector fixed in the body of p_i.

    With d = p_j - p_i:  Phi_q = d^T J_e + e^T (J_j - J_i)  and
    gamma = -(conv_e.d + 2 e'.d' + e.(conv_j - conv_i)) (+ f'').
    """

    e: MarkerSet = field(kw_only=True)
    pi: MarkerSet = field(kw_only=True)
    pj: MarkerSet = field(kw_only=True)
    offset: np.ndarray = field(kw_only=True)

    def _evaluate(self, qe, ve):
        e, a, b = (m.evaluate(qe, ve) for m in (self.e, self.pi, self.pj))
        d, dd = b.pos - a.pos, b.vel - a.vel
        phi = np.einsum("ki,ki->k", e.pos, d) - self.offset
        jac_a = np.einsum("ki,kic->kc", d, e.jac) - np.einsum("ki,kic->kc", e.pos, a.jac)
        jac_b = np.einsum("ki,kic->kc", e.pos, b.jac)
        gamma = -(np.einsum("ki,ki->k", e.conv, d) + 2 * np.einsum("ki,ki->k", e.vel, dd)
                  + np.einsum("ki,ki->k", e.pos, b.conv - a.conv))
        return phi, np.concatenate([jac_a, jac_b], axis=1), gamma


@dataclass(frozen=True)
class CoordinateDriver(ConstraintGroup):
    """Phi = q_k - c - f(t); ``cols`` (k, 1)."""

    offset: np.ndarray = field(kw_only=True)

    def _evaluate(self, qe, ve):
        phi = qe[self.cols[:, 0]] - self.offset
        return phi, np.ones(self.cols.shape), np.zeros(len(phi))


@dataclass(frozen=True)
class Generic(ConstraintGroup):
    """A user constraint Phi(q, t) (r,) with optional Jacobian Phi_q(q, t) (r, n), Phi_t(q, t) (r,)
    and gamma(q, v, t) (r,).

    Missing first derivatives are computed by complex-step differentiation (Squire & Trapp 1998):
    exact to round-off, not a finite difference, provided the user functions accept complex input
    (NumPy functions do; ``abs`` and comparisons do not). gamma = -g''(0) with
    g(s) = Phi(q + s v, t + s). When both ``jacobian`` and ``phi_t`` are given, g'(s) = Phi_q v + Phi_t
    is differentiated by one more complex step (exact). Otherwise g' is taken by complex step and g''
    by a central difference of g' with step ``GAMMA_STEP`` (relative truncation error about 1e-9);
    give ``jacobian`` and ``phi_t`` (or ``gamma``) for an exact gamma.

    ``extended`` (optional): the same residuals in double-double, f(q, v, t) with q, v pairs (hi, lo) (v None:
    Phi; else Phi_q v + Phi_t), for the projection's extended-precision polish next to a singular configuration;
    without it those rows are evaluated in double there (formulations.extended_generic says what that means).
    """

    phi_fun: object = field(kw_only=True)
    jac_fun: object = field(default=None, kw_only=True)
    phi_t_fun: object = field(default=None, kw_only=True)
    gamma_fun: object = field(default=None, kw_only=True)
    extended_fun: object = field(default=None, kw_only=True)
    n: int = field(kw_only=True)

    STEP = 1e-30        # complex step: any tiny value works, there is no subtraction error
    GAMMA_STEP = 1e-4   # central-difference step (in units of t) for gamma without analytic Jacobian

    def _phi(self, q, t):
        return np.asarray(self.phi_fun(q, t)).reshape(self.rows)

    def _jac(self, q, t):
        if self.jac_fun is not None:
            return np.asarray(self.jac_fun(q, t)).reshape(self.rows, self.n)
        h = self.STEP
        cols = [np.imag(self._phi(q + 1j * h * ei, t)) / h for ei in np.eye(self.n)]
        return np.array(cols).T.reshape(self.rows, self.n)

    def _phi_t(self, q, t):
        if self.phi_t_fun is not None:
            return np.asarray(self.phi_t_fun(q, t)).reshape(self.rows)
        return np.imag(self._phi(q.astype(complex), t + 1j * self.STEP)) / self.STEP

    def _rate(self, q, v, t, s):
        """g'(s) = d/ds Phi(q + s v, t + s) by complex step (real s)."""
        h = self.STEP
        return np.imag(self._phi(q + (s + 1j * h) * v, t + s + 1j * h)) / h

    def _gamma(self, q, v, t):
        if self.gamma_fun is not None:
            return np.asarray(self.gamma_fun(q, v, t), dtype=float).reshape(self.rows)
        if self.jac_fun is not None and self.phi_t_fun is not None:
            h = self.STEP
            qc, tc = q + 1j * h * v, t + 1j * h
            return -np.imag(self._jac(qc, tc) @ v + self._phi_t(qc, tc)) / h
        d = self.GAMMA_STEP
        return -(self._rate(q, v, t, d) - self._rate(q, v, t, -d)) / (2 * d)

    def evaluate(self, t, qe, ve):
        q, v = qe[: self.n], ve[: self.n]
        phi = self._phi(q, t).real.astype(float)
        jac = self._jac(q, t).real.astype(float)
        phi_t = self._phi_t(q, t).real.astype(float)
        return ConstraintValues(phi, jac, phi_t, self._gamma(q, v, t))
