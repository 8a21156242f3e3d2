"""Sparse tangent matrices of the dynamic residual by coloured finite differences.

The implicit (generalized-alpha) integrator needs, at a state (t, q, v) with accelerations a and
multipliers lambda, the derivatives of the residual of the equations of motion

    r(q, v) = M(q) a + A(q)^T lambda - f(t, q, v)                      (paper 000 eq. 3)

    K_t = dr/dq  (stiffness: geometric stiffness of the constraints, force Jacobians, dM/dq a),
    C_t = dr/dv = -df/dv  (damping),

as scipy.sparse matrices (Arnold & Bruels 2007, Multibody Syst. Dyn. 18:185-202, eq. 15). The model
gives no second derivatives of the constraints, so the columns are found by forward differences in
groups: columns j and k share a group when no row of the residual depends on both (a distance-2
colouring of the structural pattern; Curtis, Powell & Reid 1974). A planar chain needs 9 groups
whatever its length, so one matrix costs a fixed number of residual evaluations, each O(n).

Structural pattern: the columns a constraint row touches (the Workspace's fixed Jacobian pattern),
the columns each spring-damper or point force couples (its markers), and all columns for user
generalized forces and configuration-dependent mass matrices (dense: only sensible for small models).
"""
from __future__ import annotations

import numpy as np
import scipy.sparse as sp

from ..model.forces import ConstantForce, SpringDampers

#: relative forward-difference increment: sqrt(machine epsilon) balances truncation and round-off
FD_RELATIVE_STEP = np.sqrt(np.finfo(float).eps)


def _incidence(row_cols: list[np.ndarray], n: int) -> sp.csr_matrix:
    """Boolean incidence (k, n) of k coupling sets given as integer column arrays (k_i, w_i); columns
    >= n (the ground column of the extended arrays) are dropped."""
    mats = []
    for cols in row_cols:
        cols = np.asarray(cols).reshape(len(cols), -1)
        rows = np.broadcast_to(np.arange(len(cols))[:, None], cols.shape)
        keep = cols < n
        mats.append(sp.csr_matrix((np.ones(keep.sum()), (rows[keep], cols[keep])), shape=(len(cols), n)))
    return sp.vstack(mats, format="csr") if mats else sp.csr_matrix((0, n))


def force_couplings(model) -> tuple[list[np.ndarray], list[np.ndarray]]:
    """(q-couplings, v-couplings) of the model's force elements: per element a (k, w) column array of
    the columns that act on each other; all columns when an element is a user function."""
    n, in_q, in_v, dense = model.n, [], [], False
    for el in model.forces:
        if isinstance(el, ConstantForce):
            continue
        if isinstance(el, SpringDampers):
            cols = np.concatenate([el.pi.cols, el.pj.cols], axis=1)
            in_q.append(cols)
            if np.any(np.asarray(el.damping) != 0):
                in_v.append(cols)
        else:                           # PointForce, GeneralizedForce: a user function of (t, q, v)
            dense = True
    if dense:
        everything = np.arange(n)[None, :]
        in_q, in_v = [everything], [everything]
    return in_q, in_v


def column_groups(pattern: sp.csr_matrix) -> np.ndarray:
    """Greedy distance-2 colouring: group index (n,) such that no row of ``pattern`` (r, n) has two
    entries in columns of the same group (Curtis-Powell-Reid grouping)."""
    P = sp.csc_matrix(pattern, dtype=bool)
    conflicts = sp.csr_matrix(P.T @ P)          # columns sharing a row
    n = P.shape[1]
    colour, seen = np.full(n, -1), np.full(n + 1, -1)
    for j in range(n):                          # set-up only, once per model
        taken = colour[conflicts.indices[conflicts.indptr[j]:conflicts.indptr[j + 1]]]
        seen[taken[taken >= 0]] = j             # the colours column j may not take (marks, not a set difference:
        c = 0                                   # 0.45 s for the chain of 1000 bars)
        while seen[c] == j:
            c += 1
        colour[j] = c                           # the smallest colour not taken
    return colour


class ResidualJacobian:
    """Coloured forward differences of a vector function g (n,) -> (n,) with a known sparse pattern
    (n, n): ``matrix(g, x, scale)`` -> csr (n, n), using one evaluation of g per column group."""

    def __init__(self, pattern: sp.csr_matrix):
        P = sp.coo_matrix(pattern)
        self.n = P.shape[1]
        self.rows, self.cols = P.row.astype(np.int64), P.col.astype(np.int64)
        self.colour = column_groups(sp.csr_matrix(P))
        self.n_groups = int(self.colour.max()) + 1 if self.n else 0
        self.members = [np.flatnonzero(self.colour == c) for c in range(self.n_groups)]

    def matrix(self, g, x: np.ndarray, scale: np.ndarray) -> sp.csr_matrix:
        """dg/dx at x; ``scale`` (n,) the size of each variable (increment FD_RELATIVE_STEP * max(|x|, scale))."""
        n = self.n
        if not self.n_groups or not len(self.rows):
            return sp.csr_matrix((n, n))
        g0 = g(x)
        step = FD_RELATIVE_STEP * np.maximum(np.abs(x), scale)
        diffs = np.empty((n, self.n_groups))
        for c, cols in enumerate(self.members):           # one evaluation per group (9 for a chain)
            xp = x.copy()
            xp[cols] += step[cols]
            h = xp[cols] - x[cols]                        # the representable increment
            step[cols] = h
            diffs[:, c] = g(xp) - g0
        vals = diffs[self.rows, self.colour[self.cols]] / step[self.cols]
        return sp.csr_matrix((vals, (self.rows, self.cols)), shape=(n, n))


class TangentMatrices:
    """K_t (n, n) and C_t (n, n) of the residual r = M(q) a + A(q)^T lambda - f(t, q, v) (module doc)."""

    def __init__(self, ws, sparse: bool = False, constraints=None):
        model = self.model = ws.model
        self.ws, self.sparse, n = ws, sparse, model.n
        self.constraints = constraints      # optional (t, q, v) -> (Phi, dense A), e.g. compiled
        in_q, in_v = force_couplings(model)
        if model.mass_fun is not None:
            in_q = [np.arange(n)[None, :]]
        constraint_rows = _incidence(list(ws.cols), n)
        q_rows = sp.vstack([constraint_rows, _incidence(in_q, n)], format="csr")
        self.K = ResidualJacobian(q_rows.T @ q_rows)
        v_rows = _incidence(in_v, n)
        self.C = ResidualJacobian(v_rows.T @ v_rows) if in_v else None
        self.scale = np.full(n, model.length_scale)

    def constraint_force(self, t, q, lam) -> np.ndarray:
        """A(q)^T lambda (n,) (paper 000 eq. 3), A from the Workspace (sparse CSR or dense)."""
        ws = self.ws
        how = self.constraints or (ws.sparse_constraints if self.sparse else ws.constraints)
        A = how(t, q, np.zeros_like(q))[1]
        return A.T @ lam

    def stiffness(self, t, q, v, a, lam) -> sp.csr_matrix:
        """K_t = d/dq [M(q) a + A(q)^T lambda - f(t, q, v)] at fixed (v, a, lambda)."""
        model, ws = self.model, self.ws

        def r(x):
            out = self.constraint_force(t, x, lam) - ws.forces(t, x, v)
            return out + model.mass(x) @ a if model.mass_fun is not None else out

        return self.K.matrix(r, np.asarray(q, float), self.scale)

    def damping(self, t, q, v) -> sp.csr_matrix | None:
        """C_t = -df/dv (None when no force depends on the velocities)."""
        if self.C is None:
            return None
        return self.C.matrix(lambda x: -self.ws.forces(t, q, x), np.asarray(v, float), self.scale)
