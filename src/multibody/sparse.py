"""Sparse linear algebra for large models (issue 7 item 3): O(nnz) per solve instead of O(n^3).

A = Phi_q is assembled as a scipy.sparse CSR matrix from the Workspace's fixed pattern, the constant
mass matrix is kept as sparse M and M^-1, and every solve goes through SuperLU (scipy.sparse.linalg.splu)
of an m x m symmetric positive definite matrix:

- accelerations (paper 000 eqs 3, 6; paper 003 eqs 4-9) by the Schur complement of the augmented system,
      S = A M^-1 A^T,  S lambda = A M^-1 f - gamma,  q'' = M^-1 (f - A^T lambda);
- minimum-norm Gauss-Newton steps for positions and velocities (paper 000 eq. 5),
      dq = -A^T (A A^T)^-1 Phi;
- the tangent filter of the local error, x - A^T (A A^T)^-1 A x (the dense row_space_filter).

All of them require A of full row rank (no redundant rows, no singular configuration): a singular or
nearly singular factor (pivot ratio below SPARSE_PIVOT_RATIO) raises SimulationError pointing to the
dense path (``sparse=False``), which handles redundancy and singular configurations (linalg.gauss_solve).
The dense per-step rank and uniqueness diagnostics are skipped in sparse mode: full row rank, which the
factorisation checks, already means unique multipliers and reactions (paper 003 Sect. 5).
"""
from __future__ import annotations

import numpy as np
import scipy.sparse as sp
import scipy.sparse.linalg as spla

from .errors import MultibodyError, SimulationError

#: models with at least this many coordinates use the sparse path automatically (Lagrange ``sparse=None``
#: and the kinematic solves); below it the dense path (compiled fast path, or NumPy reference) is faster and
#: also handles redundant rows and singular configurations. Measured per rhs on bar chains (n = 3N, one BLAS
#: thread): n = 60: fast 25 us, sparse 264 us; n = 150: fast 313 us, sparse 293 us (break-even);
#: n = 300: fast 3.0 ms, NumPy reference 10.9 ms, sparse 0.34 ms; n = 600: 27 ms, 64 ms, 0.41 ms
SPARSE_MIN_COORDINATES = 150

#: smallest accepted |U_ii| / max |U_ii| of the SuperLU factor of an SPD matrix S = A W A^T: S loses rank
#: like sigma^2 at distance sigma from a singular configuration, so 1e-10 rejects distances below ~1e-5
#: (relative) and exactly redundant rows (ratio ~1e-16); above it the solve keeps ~6 correct digits
SPARSE_PIVOT_RATIO = 1e-10


def eligible(model) -> str | None:
    """None if the model can take the sparse path, else the reason (nonholonomic rows, Generic groups)."""
    from .model.constraints import Generic
    if model.h:
        return "nonholonomic rows"
    if any(isinstance(g, Generic) for g in model.constraints):
        return "Generic constraint groups"
    return None


def use_sparse(model, sparse: bool | None) -> bool:
    """Resolve a ``sparse`` option: None -> n >= SPARSE_MIN_COORDINATES and the model is eligible;
    True on an ineligible model raises MultibodyError."""
    if sparse is None:
        return model.n >= SPARSE_MIN_COORDINATES and eligible(model) is None
    reason = eligible(model) if sparse else None
    if reason:
        raise MultibodyError(f"Model '{model.name}': the sparse path does not handle {reason}; use sparse=False.")
    return bool(sparse)


def lagrange_sparse(form, sparse: bool | None, eliminate, choose_rows) -> bool:
    """Resolve the Lagrange ``sparse`` option (None: automatic for large eligible models without
    ``eliminate``/``choose_rows`` and with the plain Lagrange acceleration solve)."""
    from .formulations.lagrange import Lagrange
    plain = type(form)._solve is Lagrange._solve
    if sparse is None:
        return use_sparse(form.model, None) and plain and not eliminate and not choose_rows
    if sparse and (not plain or eliminate or choose_rows):
        raise MultibodyError(f"Model '{form.model.name}': sparse=True needs the plain '{Lagrange.name}' solve "
                             "without eliminate/choose_rows (the sparse path requires independent rows).")
    return use_sparse(form.model, sparse)


class SparsePattern:
    """The CSR structure of A (m, n) built once from ``ws.rows``/``ws.cols``: entries in column n (the
    time/ground column of the extended arrays) are dropped, duplicates keep the last write (as the dense
    assignment ``A[rows, cols] = jac`` does)."""

    def __init__(self, ws):
        n, m = ws.model.n, ws.m
        rows = np.concatenate([np.ravel(r) for r in ws.rows]) if ws.rows else np.zeros(0, int)
        cols = np.concatenate([np.ravel(c) for c in ws.cols]) if ws.cols else np.zeros(0, int)
        lin = rows.astype(np.int64) * (n + 1) + cols
        last = len(lin) - 1 - np.unique(lin[::-1], return_index=True)[1]     # last write of each (row, col)
        take = last[cols[last] < n]
        order = np.lexsort((cols[take], rows[take]))
        self.take = take[order]                                             # into the concatenated values
        self.indices = cols[self.take].astype(np.int32)
        self.indptr = np.searchsorted(rows[self.take], np.arange(m + 1)).astype(np.int32)
        self.shape = (m, n)

    def matrix(self, jacs) -> sp.csr_matrix:
        data = np.concatenate([np.ravel(j) for j in jacs])[self.take] if jacs else np.zeros(0)
        return sp.csr_matrix((data, self.indices, self.indptr), shape=self.shape)


def factor_spd(S, what: str):
    """SuperLU factor of the SPD matrix S (k, k); raises SimulationError when S is singular or nearly so."""
    try:
        lu = spla.splu(sp.csc_matrix(S), permc_spec="MMD_AT_PLUS_A", diag_pivot_thresh=0.0,
                       options={"SymmetricMode": True})
    except RuntimeError as exc:
        raise _singular(what, str(exc)) from None
    d = np.abs(lu.U.diagonal())
    if d.size and not (np.all(np.isfinite(d)) and d.min() > SPARSE_PIVOT_RATIO * d.max()):
        raise _singular(what, f"pivot ratio {d.min() / max(d.max(), np.finfo(float).tiny):.1e}")
    return lu


def _singular(what: str, detail: str) -> SimulationError:
    return SimulationError(
        f"sparse {what}: the constraint Jacobian A is (nearly) rank deficient ({detail}); the model has "
        f"redundant constraints or is at a singular configuration, which the sparse path does not handle. "
        f"Use the dense path: formulation_options={{'sparse': False}}.")


def min_norm_correction(A, r, what: str) -> np.ndarray:
    """x = A^T (A A^T)^-1 r (n,) or (n, k): the minimum-norm solution of A x = r, A (m, n) sparse of full
    row rank (paper 000 eq. 5; Gauss-Newton step of the position problem)."""
    if A.shape[0] == 0:
        return np.zeros((A.shape[1],) + np.shape(r)[1:])
    lu = factor_spd(A @ A.T, what)
    return A.T @ lu.solve(np.asarray(r, float))


def tangent_filter(A, x) -> np.ndarray:
    """x (n,) or (n, k) minus its row-space part A^T (A A^T)^-1 A x (the sparse row_space_filter)."""
    return x - min_norm_correction(A, A @ x, "tangent error filter")


class SparseMass:
    """Constant mass matrix as sparse M and M^-1 (diagonal: exact reciprocal; else SuperLU inverse)."""

    def __init__(self, M):
        M = np.asarray(M, float)
        if np.count_nonzero(M - np.diag(np.diag(M))) == 0:
            d = np.diag(M)
            if np.any(d <= 0):
                raise SimulationError("the mass matrix is not positive definite (a diagonal entry <= 0); "
                                      "every motion the constraints allow must carry mass or inertia.")
            self.M, self.Minv = sp.diags(d).tocsr(), sp.diags(1.0 / d).tocsr()
        else:
            self.M = sp.csc_matrix(M)
            self.Minv = sp.csr_matrix(spla.inv(self.M))


def schur_accelerations(mass: SparseMass, A, f, gamma):
    """(q'' (n,), lambda (m,)) of M q'' + A^T lambda = f, A q'' = gamma via S = A M^-1 A^T (see module)."""
    if A.shape[0] == 0:
        return mass.Minv @ f, np.zeros(0)
    MiAt = mass.Minv @ A.T
    lu = factor_spd(A @ MiAt, "acceleration solve")

    def solve(r1, r2):          # the augmented system with right-hand side (r1, r2) via S
        lam = lu.solve(A @ (mass.Minv @ r1) - r2)
        return mass.Minv @ r1 - MiAt @ lam, lam

    return solve(f, gamma)


class SparseLagrange:
    """The sparse pieces of :class:`~multibody.formulations.lagrange.Lagrange` (``sparse=True``)."""

    def __init__(self, form):
        self.form, self.model, self.ws = form, form.model, form.ws
        M0 = self.model.mass(self.model.q0)
        self.mass = SparseMass(M0) if self.model.mass_matrix is not None else None

    def solve(self, t, q, v):
        """(q'' (n,), lambda (m,), A sparse, f) at (t, q, v), Baumgarte terms included if chosen."""
        Phi, A, Phi_t, gamma = self.ws.sparse_constraints(t, q, v)
        s = self.form.stabilization
        if s.kind == "baumgarte":
            gamma = gamma - 2 * s.alpha * (A @ v + Phi_t) - s.beta ** 2 * Phi
        mass = self.mass or SparseMass(self.model.mass(q))
        f = self.ws.forces(t, q, v)
        vdot, lam = schur_accelerations(mass, A, f, gamma)
        return vdot, lam, A, f

    def rhs(self, t, y):
        q, v = self.form.split(t, y)
        return np.concatenate([v, self.solve(t, q, v)[0]])

    @staticmethod
    def summary() -> dict:
        return {"linear_algebra": "sparse (SuperLU, Schur complement A M^-1 A^T); per-step rank and "
                                  "uniqueness diagnostics skipped (full row rank checked by the factorisation)"}
