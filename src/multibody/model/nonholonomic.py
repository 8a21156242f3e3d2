"""Nonholonomic (Pfaffian) constraint groups: Psi(q, t) v + psi_t(q, t) = 0 (paper 003 eq. 3).

A group of r rows has no position residual; at a state (t, q, v) it returns

- ``jac`` (r, w): the entries of Psi in the fixed pattern ``cols`` (r, w) (column n = ground, dropped);
- ``psi_t`` (r,): the time term (zero for the scleronomic constraints of paper 003);
- ``gamma`` (r,): right-hand side of Psi q'' = gamma, gamma = -(Psi v)_q v - Psi_t v - (psi_t)' (eq. 9).

The constraint matrix of the whole system is C = [Phi_q; Psi] ((m + h), n), eq. 5; the
velocity-level rows carry labels "name.component" like the holonomic ones, so multipliers, reactions
and the solvability analysis treat both kinds uniformly (paper 003 Sect. 3).
"""
from __future__ import annotations

from dataclasses import dataclass, field

import numpy as np

from .constraints import ConstraintValues
from .markers import MarkerSet


@dataclass(frozen=True)
class PfaffianGroup:
    """Base: ``labels`` (r,) "name.component", ``cols`` (r, w) pattern of Psi."""

    labels: tuple[str, ...]
    cols: np.ndarray

    @property
    def rows(self) -> int:
        return len(self.labels)

    def evaluate(self, t: float, qe: np.ndarray, ve: np.ndarray) -> ConstraintValues:  # pragma: no cover
        """ConstraintValues with phi = 0 (no position residual), jac = Psi entries, phi_t = psi_t."""
        raise NotImplementedError


@dataclass(frozen=True)
class KnifeEdge(PfaffianGroup):
    """Knife edges of planar bodies on the ground (paper 003 eqs 30-31): the velocity of the contact
    point K has no component along the edge normal n (fixed in the body):

        Psi^K q' = n^T v_K = (R n)^T (r' + Omega R s theta'),      Psi^K = [(R n)^T, n^T Omega s],
        gamma^K  = -(n' . v_K + n . conv_K) = -(Omega R n)^T r' theta'   (eq. 31),

    with conv_K = -R s theta'^2 the convective acceleration of K. ``point`` (k markers) are the contact
    points, ``normal`` (k vector markers) the unit normals; ``cols`` (k, 3) the body columns.
    """

    point: MarkerSet = field(kw_only=True)
    normal: MarkerSet = field(kw_only=True)

    def evaluate(self, t, qe, ve):
        p, nrm = self.point.evaluate(qe, ve), self.normal.evaluate(qe, ve)
        jac = np.einsum("ki,kic->kc", nrm.pos, p.jac)
        gamma = -(np.einsum("ki,ki->k", nrm.vel, p.vel) + np.einsum("ki,ki->k", nrm.pos, p.conv))
        r = self.rows
        return ConstraintValues(np.zeros(r), jac, np.zeros(r), gamma)


@dataclass(frozen=True)
class GenericPfaffian(PfaffianGroup):
    """A user Pfaffian constraint Psi(q, t) (r, n) v + psi_t(q, t) (r,) = 0, with optional
    gamma(q, v, t) (r,).

    Without ``gamma``: gamma = -d/ds [Psi(q + s v, t + s) v + psi_t(q + s v, t + s)] at s = 0 (eq. 9
    extended by the time terms), by complex-step differentiation (exact to round-off; the user
    functions must accept complex q, as NumPy functions do). Give ``gamma`` otherwise.
    """

    psi_fun: object = field(kw_only=True)
    psi_t_fun: object = field(default=None, kw_only=True)
    gamma_fun: object = field(default=None, kw_only=True)
    n: int = field(kw_only=True)

    STEP = 1e-30   # complex step: no subtraction error, any tiny value works

    def _rate(self, q, v, t):
        out = np.asarray(self.psi_fun(q, t)).reshape(self.rows, self.n) @ v
        if self.psi_t_fun is not None:
            out = out + np.asarray(self.psi_t_fun(q, t)).reshape(self.rows)
        return out

    def evaluate(self, t, qe, ve):
        q, v = qe[: self.n], ve[: self.n]
        psi = np.asarray(self.psi_fun(q, t), dtype=float).reshape(self.rows, self.n)
        psi_t = (np.zeros(self.rows) if self.psi_t_fun is None
                 else np.asarray(self.psi_t_fun(q, t), dtype=float).reshape(self.rows))
        if self.gamma_fun is not None:
            gamma = np.asarray(self.gamma_fun(q, v, t), dtype=float).reshape(self.rows)
        else:
            h = self.STEP
            gamma = -np.imag(self._rate(q + 1j * h * v, v, t + 1j * h)) / h
        return ConstraintValues(np.zeros(self.rows), psi, psi_t, gamma)
