"""Physical reactions with a distribution matrix B (paper 001 Sect. 5, eqs 30-38, Appendix B).

The multipliers of C^T lam depend on how the constraints are written (for the pendulum
Phi = x^2 + y^2 - rho^2 lam is not the rod force). The physical reactions f (p,) are defined by a
distribution matrix B (p, n), full row rank, whose rows span the constrained subspace (B D^T = 0):

    C^T lam = C_hat^T lam_hat = B^T f = M q'' - h                                  (32, 36)

(paper's signs: M q'' = h + C^T lam; h = our f, the applied and gyroscopic forces). B^T f is the
virtual work of the reactions, so B is the Jacobian of the constrained point's motion along the
reaction directions (virtual work method, paper 001 after eq. 32). Three schemes, equal in exact
arithmetic (Appendix B):

    (35)  f = (B M^-1 B^T)^-1 B ([0; xi] - M^-1 h)
    (37)  [f; 0] = (T_bd M)^-T (M q'' - h),   (T_bd M)^T = [B^T  M D^T]   (n, n)
    (38)  B^T f = M q'' - h, solved on p independent rows of B^T (Gauss)

with q'' = D^T q''_I + [0; xi] from the reduced equations (10, 12). The closing-condition
multipliers of C_hat = [-J_DI  I] (eq. 31) are lam_hat = (M q'' - h)_D.

Joint-supplied B (:func:`joint_distribution`) for models built with the ModelBuilder: B = S C with
S = -1 on the rows whose Phi is written a - b (Coincident: f = force of body a on body b, global x
and y; Distance: f = tension) and S = +1 on the rows written b - a (Angle: moment of a on b;
LineProjection: force on b along the normal; drivers: driving force or torque).
"""
from __future__ import annotations

from dataclasses import dataclass

import numpy as np
import scipy.linalg as sla

from ..assembly import Workspace
from ..errors import MultibodyError
from ..model.constraints import Coincident, Distance, Generic
from ..model.system import Model
from .partition import Partition, admissible_partition, tangent_matrix

#: B D^T must vanish: |B D^T| <= DISTRIBUTION_TOL * |B| |D| (B spans the constrained subspace)
DISTRIBUTION_TOL = 1e-8


@dataclass(frozen=True)
class PhysicalReactions:
    """f by schemes (35), (37), (38) (p,); tangent (k,): the lower part of (37) (zero in exact
    arithmetic); closing (r,): lam_hat of eq. 31; qdd (n,); partition used."""

    f35: np.ndarray
    f37: np.ndarray
    f38: np.ndarray
    tangent: np.ndarray
    closing: np.ndarray
    qdd: np.ndarray
    partition: Partition

    @property
    def spread(self) -> float:
        """Largest difference between the three schemes, relative to max |f| (round-off: ~1e-15)."""
        F = np.stack([self.f35, self.f37, self.f38])
        return float(np.max(np.ptp(F, axis=0), initial=0.0) / max(np.max(np.abs(F), initial=0.0),
                                                                  np.finfo(float).tiny))


def reactions_from_constraint_force(B: np.ndarray, constraint_force: np.ndarray) -> np.ndarray:
    """f (p,) from B^T f = M q'' - h = -A^T lambda (eqs 32, 38; our sign M q'' + A^T lambda = f), by
    least squares on the full-column-rank B^T (n, p): the constraint force A^T lambda is unique even
    where lambda is not (redundant rows), so f is too. Used per recorded state of a run."""
    return np.linalg.lstsq(np.asarray(B, float).T, -np.asarray(constraint_force, float), rcond=None)[0]


def physical_reactions(model: Model, t: float, q, v, B, *, partition: Partition | None = None,
                       ws: Workspace | None = None) -> PhysicalReactions:
    """Physical reactions of a consistent state (t, q (n,), v (n,)) by the three schemes.

    B: (p, n) array, or callable B(q, t) -> (p, n), with p the number of independent constraints."""
    ws = ws or Workspace(model)
    q, v = np.asarray(q, float), np.asarray(v, float)
    terms = ws.terms(t, q, v)
    part = partition or admissible_partition(terms.A)
    Bm = np.atleast_2d(np.asarray(B(q, t) if callable(B) else B, dtype=float))
    D, _ = tangent_matrix(terms.A, part)
    _check_distribution(Bm, D, part, model)
    qdd, base = _reduced_accelerations(terms, D, part)
    Minv_h = sla.cho_solve(sla.cho_factor(terms.M), terms.f)
    Minv_BT = sla.cho_solve(sla.cho_factor(terms.M), Bm.T)
    f35 = sla.solve(Bm @ Minv_BT, Bm @ (base - Minv_h), assume_a="pos")                 # eq. 35
    rhs = terms.M @ qdd - terms.f                                                        # eq. 36
    x = sla.solve(np.hstack([Bm.T, terms.M @ D.T]), rhs)                                 # eq. 37
    p = Bm.shape[0]
    cols = sla.qr(Bm, pivoting=True, mode="r")[1][:p]                                    # rows of B^T
    f38 = sla.solve(Bm.T[cols], rhs[cols])                                               # eq. 38
    return PhysicalReactions(f35, x[:p], f38, x[p:], rhs[list(part.dependent)], qdd, part)


def _reduced_accelerations(terms, D, part):
    """q'' = D^T q''_I + [0; xi] (eqs 10, 12-14) and [0; xi] (n,)."""
    rows, dep = list(part.rows), list(part.dependent)
    base = np.zeros(D.shape[1])
    if dep:
        base[dep] = sla.solve(terms.A[np.ix_(rows, dep)], terms.gamma[rows])
    if D.shape[0] == 0:
        return base, base
    Md = D @ terms.M @ D.T
    qdd_I = sla.solve(Md, D @ (terms.f - terms.M @ base), assume_a="pos")
    return D.T @ qdd_I + base, base


def _check_distribution(B, D, part, model):
    n, r = D.shape[1], len(part.rows)
    if B.shape != (r, n):
        raise MultibodyError(f"model '{model.name}': the distribution matrix B must be ({r}, {n}) (one row "
                             f"per independent constraint), got {B.shape}.")
    scale = max(np.linalg.norm(B) * max(np.linalg.norm(D), 1.0), np.finfo(float).tiny)
    if D.size and np.linalg.norm(B @ D.T) > DISTRIBUTION_TOL * scale:
        raise MultibodyError(f"model '{model.name}': B does not lie in the constrained subspace "
                             f"(|B D^T| = {np.linalg.norm(B @ D.T):.3g}); its rows must be virtual-work "
                             "Jacobians of the constrained motions (paper 001 eq. 32).")
    if r and np.linalg.matrix_rank(B) < r:
        raise MultibodyError(f"model '{model.name}': B must have full row rank {r}.")


def joint_distribution(model: Model, t: float, q, *, rows=None, ws: Workspace | None = None) -> np.ndarray:
    """Joint-supplied B (r, n) = S C[rows] of a builder model (module docstring); rows default to
    the independent rows of C."""
    ws = ws or Workspace(model)
    C = ws.constraints(t, np.asarray(q, float), np.zeros(model.n))[1]
    signs, start = np.empty(model.m), 0
    for g in model.constraints:
        if isinstance(g, Generic):
            raise MultibodyError(f"model '{model.name}': constraint rows {', '.join(g.labels)} are user "
                                 "functions with no physical reaction direction; supply B yourself.")
        signs[start:start + g.rows] = -1.0 if isinstance(g, (Coincident, Distance)) else 1.0
        start += g.rows
    rows = admissible_partition(C).rows if rows is None else rows
    return signs[list(rows), None] * C[list(rows)]
