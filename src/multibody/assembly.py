"""Assembly: everything the equations of motion need at one state (t, q, v).

    Terms: M (n, n), f (n,), Phi (m,), A = Phi_q (m, n), Phi_t (m,), gamma (m,)

with M q'' + A^T lambda = f and A q'' = gamma (paper 000 eqs 3, 6; paper 003 eqs 4-9). The
Workspace holds the fixed Jacobian pattern of the model (row and column index of every nonzero, the
pattern a sparse assembly would use) and the preallocated arrays; evaluation loops over constraint
*groups* (one per joint type), never over joints.
"""
from __future__ import annotations

from dataclasses import dataclass

import numpy as np

from .model.system import Model


@dataclass(frozen=True)
class State:
    """t, q (n,), v (n,)."""

    t: float
    q: np.ndarray
    v: np.ndarray


@dataclass
class Terms:
    M: np.ndarray
    f: np.ndarray
    Phi: np.ndarray
    A: np.ndarray
    Phi_t: np.ndarray
    gamma: np.ndarray


class Workspace:
    """Per-model evaluation data: the Jacobian pattern and preallocated extended arrays.

    ``rows[g]``, ``cols[g]``: the (r_g, w_g) row and column index of every Jacobian entry of group g.
    """

    def __init__(self, model: Model):
        self.model = model
        n = model.n
        self.qe = np.zeros(n + 1)
        self.ve = np.zeros(n + 1)
        self.rows, self.cols, start = [], [], 0
        for g in model.constraints:
            r = g.rows
            self.rows.append(np.broadcast_to(np.arange(start, start + r)[:, None], g.cols.shape))
            self.cols.append(g.cols)
            start += r
        self.m = start
        self.nh_rows, self.nh_cols, start = [], [], 0
        for g in model.nonholonomic:
            self.nh_rows.append(np.broadcast_to(np.arange(start, start + g.rows)[:, None], g.cols.shape))
            self.nh_cols.append(g.cols)
            start += g.rows
        self.h = start

    def extend(self, q, v):
        n = self.model.n
        self.qe[:n] = q
        self.ve[:n] = v
        return self.qe, self.ve

    def constraints(self, t, q, v, *, need_jacobian=True):
        """Phi (m,), A (m, n), Phi_t (m,), gamma (m,)."""
        model, m, n = self.model, self.m, self.model.n
        qe, ve = self.extend(q, v)
        Phi, Phi_t, gamma = np.empty(m), np.empty(m), np.empty(m)
        A = np.zeros((m, n + 1))
        start = 0
        for g, rows, cols in zip(model.constraints, self.rows, self.cols):
            val = g.evaluate(t, qe, ve)
            sl = slice(start, start + g.rows)
            Phi[sl], Phi_t[sl], gamma[sl] = val.phi, val.phi_t, val.gamma
            A[rows, cols] = val.jac
            start += g.rows
        return Phi, A[:, :n], Phi_t, gamma

    def sparse_constraints(self, t, q, v):
        """Phi (m,), A (m, n) as scipy.sparse CSR (never densified), Phi_t (m,), gamma (m,): the same values
        as :meth:`constraints`, in the fixed pattern ``rows``/``cols`` (issue 7 item 3, see sparse.py)."""
        if getattr(self, "_pattern", None) is None:
            from .sparse import SparsePattern
            self._pattern = SparsePattern(self)
        m = self.m
        qe, ve = self.extend(q, v)
        Phi, Phi_t, gamma, jacs = np.empty(m), np.empty(m), np.empty(m), []
        start = 0
        for g in self.model.constraints:
            val = g.evaluate(t, qe, ve)
            sl = slice(start, start + g.rows)
            Phi[sl], Phi_t[sl], gamma[sl] = val.phi, val.phi_t, val.gamma
            jacs.append(np.broadcast_to(val.jac, self.cols[len(jacs)].shape))
            start += g.rows
        return Phi, self._pattern.matrix(jacs), Phi_t, gamma

    def velocity_constraints(self, t, q, v):
        """Phi (m,), C = [Phi_q; Psi] (m + h, n), b = [Phi_t; psi_t] (m + h,), Gamma (m + h,):
        velocity constraints C v + b = 0 and acceleration constraints C q'' = Gamma (paper 003 eqs 4-9).
        Without nonholonomic rows C = A. ``constraints`` stays holonomic-only."""
        Phi, A, Phi_t, gamma = self.constraints(t, q, v)
        if not self.h:
            return Phi, A, Phi_t, gamma
        n = self.model.n
        qe, ve = self.extend(q, v)
        Psi, psi_t, g2 = np.zeros((self.h, n + 1)), np.empty(self.h), np.empty(self.h)
        start = 0
        for g, rows, cols in zip(self.model.nonholonomic, self.nh_rows, self.nh_cols):
            val = g.evaluate(t, qe, ve)
            sl = slice(start, start + g.rows)
            psi_t[sl], g2[sl] = val.phi_t, val.gamma
            Psi[rows, cols] = val.jac
            start += g.rows
        return Phi, np.vstack([A, Psi[:, :n]]), np.r_[Phi_t, psi_t], np.r_[gamma, g2]

    def forces(self, t, q, v) -> np.ndarray:
        qe, ve = self.extend(q, v)
        f = np.zeros(len(qe))
        for element in self.model.forces:
            f += element.generalized(t, qe, ve)
        return f[: self.model.n]

    def potential(self, t, q) -> float:
        qe, _ = self.extend(q, np.zeros_like(q))
        return float(sum(element.potential(t, qe) for element in self.model.forces))

    def terms(self, t, q, v) -> Terms:
        Phi, A, Phi_t, gamma = self.constraints(t, q, v)
        return Terms(self.model.mass(q), self.forces(t, q, v), Phi, A, Phi_t, gamma)


def evaluate(model: Model, t: float, q: np.ndarray, v: np.ndarray, ws: Workspace | None = None) -> Terms:
    """Terms at (t, q, v); pass a Workspace to avoid rebuilding the pattern."""
    return (ws or Workspace(model)).terms(t, np.asarray(q, float), np.asarray(v, float))


def kinetic_energy(M: np.ndarray, v: np.ndarray) -> float:
    """T = 1/2 v^T M v."""
    return 0.5 * float(v @ M @ v)
