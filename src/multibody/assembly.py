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

from .errors import MultibodyError
from .model.system import Model

#: models with at least this many coordinates use the sparse path automatically (Lagrange ``sparse=None``
#: and the kinematic solves); below it the dense path (compiled fast path, or NumPy reference) is faster and
#: also handles redundant rows and singular configurations. Measured per rhs on bar chains (n = 3N, one BLAS
#: thread): n = 60: fast 25 us, sparse 264 us; n = 150: fast 313 us, sparse 293 us (break-even);
#: n = 300: fast 3.0 ms, NumPy reference 10.9 ms, sparse 0.34 ms; n = 600: 27 ms, 64 ms, 0.41 ms
SPARSE_MIN_COORDINATES = 150


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


def _pattern(groups):
    """Row and column index (r_g, w_g) of every Jacobian entry of each group, and the total row count."""
    rows, cols, start = [], [], 0
    for g in groups:
        rows.append(np.broadcast_to(np.arange(start, start + g.rows)[:, None], g.cols.shape))
        cols.append(g.cols)
        start += g.rows
    return rows, cols, start


class Workspace:
    """Per-model evaluation data: the Jacobian pattern and preallocated extended arrays.

    ``rows[g]``, ``cols[g]``: the (r_g, w_g) row and column index of every Jacobian entry of group g.
    """

    def __init__(self, model: Model):
        self.model = model
        n = model.n
        self.qe = np.zeros(n + 1)
        self.ve = np.zeros(n + 1)
        self.rows, self.cols, self.m = _pattern(model.constraints)
        self.nh_rows, self.nh_cols, self.h = _pattern(model.nonholonomic)

    def extend(self, q, v):
        n = self.model.n
        self.qe[:n] = q
        self.ve[:n] = v
        return self.qe, self.ve

    def _scatter(self, groups, rows_list, cols_list, count, t, qe, ve):
        """Evaluate ``groups`` and place their values: (phi (count,), J (count, n + 1) with the dummy
        ground column last, phi_t (count,), gamma (count,))."""
        phi, phi_t, gamma = np.empty(count), np.empty(count), np.empty(count)
        J = np.zeros((count, self.model.n + 1))
        start = 0
        for g, rows, cols in zip(groups, rows_list, cols_list):
            val = g.evaluate(t, qe, ve)
            sl = slice(start, start + g.rows)
            phi[sl], phi_t[sl], gamma[sl] = val.phi, val.phi_t, val.gamma
            J[rows, cols] = val.jac
            start += g.rows
        return phi, J, phi_t, gamma

    def constraints(self, t, q, v):
        """Phi (m,), A (m, n), Phi_t (m,), gamma (m,)."""
        qe, ve = self.extend(q, v)
        Phi, A, Phi_t, gamma = self._scatter(self.model.constraints, self.rows, self.cols, self.m, t, qe, ve)
        return Phi, A[:, : self.model.n], Phi_t, gamma

    def sparse_constraints(self, t, q, v):
        """Phi (m,), A (m, n) as scipy.sparse CSR (never densified), Phi_t (m,), gamma (m,): the same values
        as :meth:`constraints`, in the fixed pattern ``rows``/``cols`` (issue 7 item 3, see linalg/sparse.py)."""
        if getattr(self, "_pattern", None) is None:
            from .linalg.sparse import SparsePattern
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
        qe, ve = self.extend(q, v)
        _, Psi, psi_t, g2 = self._scatter(self.model.nonholonomic, self.nh_rows, self.nh_cols, self.h, t, qe, ve)
        return Phi, np.vstack([A, Psi[:, : self.model.n]]), np.r_[Phi_t, psi_t], np.r_[gamma, g2]

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


# ----------------------------------------------------------------------------- dense or sparse
def eligible(model) -> str | None:
    """None if the model can take the sparse path, else the reason (nonholonomic rows, Generic groups)."""
    from .model.constraints import Generic
    if model.h:
        return "nonholonomic rows"
    if any(isinstance(g, Generic) for g in model.constraints):
        return "Generic constraint groups"
    return None


def varying_coupled_mass(model) -> bool:
    """True if M(q) depends on the configuration and is not diagonal at q0 (a serial chain in joint
    angles: M full). The sparse path then factors a fresh M at every evaluation and its inverse fills
    in: serial_chain N = 150 / 300, one right-hand side 100 / 309 ms sparse vs 0.9 / 3.6 ms dense
    (issue 17; medians of 3, shared machine), so the automatic choice keeps such models dense."""
    if model.mass_fun is None:
        return False
    M = np.asarray(model.mass(model.q0), float)
    return bool(np.count_nonzero(M - np.diag(np.diag(M))))


def use_sparse(model, sparse: bool | None) -> bool:
    """Resolve a ``sparse`` option: None -> n >= SPARSE_MIN_COORDINATES, the model is eligible and its
    mass matrix is constant or diagonal (:func:`varying_coupled_mass`); True on an ineligible model raises
    MultibodyError."""
    if sparse is None:
        return model.n >= SPARSE_MIN_COORDINATES and eligible(model) is None and not varying_coupled_mass(model)
    reason = eligible(model) if sparse else None
    if reason:
        raise MultibodyError(f"Model '{model.name}': the sparse path does not handle {reason}; use sparse=False.")
    return bool(sparse)
