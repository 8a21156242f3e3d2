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

from ..errors import SimulationError

#: smallest accepted |U_ii| / max |U_ii| of the SuperLU factor of an SPD matrix S = A W A^T: S loses rank
#: like sigma^2 at distance sigma from a singular configuration, so 1e-10 rejects distances below ~1e-5
#: (relative) and exactly redundant rows (ratio ~1e-16); above it the solve keeps ~6 correct digits
SPARSE_PIVOT_RATIO = 1e-10


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


#: steps of iterative refinement of the Schur solve (see schur_accelerations)
REFINEMENT_STEPS = 2


def schur_accelerations(mass: SparseMass, A, f, gamma):
    """(q'' (n,), lambda (m,)) of M q'' + A^T lambda = f, A q'' = gamma via S = A M^-1 A^T (see module).

    S has the condition number (s_max / s_min)^2 of A's singular values, so near a singular configuration
    (s_min / s_max down to 1e-5 before factor_spd refuses) the plain solve loses up to 1e-6 relative accuracy
    along the vanishing directions, and the right-hand side jumped by that much against the dense
    fallback's (linalg.gauss_solve, error ~eps s_max / s_min) from one Runge-Kutta stage to the next (issue 12:
    the N-four-bar's steps collapsed to 5e-8 s at atol 1e-12). ``REFINEMENT_STEPS`` steps of fixed-precision
    iterative refinement on the augmented system (residuals r1 = f - M q'' - A^T lambda, r2 = gamma - A q''
    in working precision, corrected with the same factor; Higham, Accuracy and Stability of Numerical
    Algorithms, 2nd ed., Sect. 12.1: each step multiplies the error by ~eps cond(S) < 1e-5 here) bring the
    solution to the accuracy of a backward-stable solve."""
    if A.shape[0] == 0:
        return mass.Minv @ f, np.zeros(0)
    MiAt = mass.Minv @ A.T
    lu = factor_spd(A @ MiAt, "acceleration solve")

    def solve(r1, r2):          # the augmented system with right-hand side (r1, r2) via S
        lam = lu.solve(A @ (mass.Minv @ r1) - r2)
        return mass.Minv @ r1 - MiAt @ lam, lam

    qdd, lam = solve(f, gamma)
    for _ in range(REFINEMENT_STEPS):
        dq, dl = solve(f - mass.M @ qdd - A.T @ lam, gamma - A @ qdd)
        qdd, lam = qdd + dq, lam + dl
    return qdd, lam
