"""Sparse linear algebra of the chart matrix K = [A; T^T] of the sparse nullspace path (formulations.nullspace_sparse,
issue 12): its LU (SuperLU), the null basis and App. A's orthonormalisation, K assembled from the compiled entries of A,
and the extreme singular values of A from the LU of [A; s N^T] (power iteration or ARPACK's Lanczos).
"""
from __future__ import annotations

import numpy as np
import scipy.sparse as sp
import scipy.sparse.linalg as spla

from ..errors import SimulationError
from ..linalg.tangent import polar_factor


def stacked(A, B):
    """[A; B^T] as CSC for the CSR A (m, n) and the dense B (n, k), assembled from A's arrays (no sparse.vstack)."""
    n, k = B.shape
    data = np.concatenate([A.data, B.T.ravel()])
    indices = np.concatenate([A.indices, np.tile(np.arange(n, dtype=A.indices.dtype), k)])
    indptr = np.concatenate([A.indptr, A.indptr[-1] + n * np.arange(1, k + 1, dtype=A.indptr.dtype)])
    return sp.csr_matrix((data, indices, indptr), shape=(A.shape[0] + k, n)).tocsc()


def chart_lu(A, T, t):
    """The sparse LU (SuperLU, natural column order, partial pivoting) of K = [A; T^T] (n, n); a loud stop where K is
    exactly singular (only at a singular configuration, which the singular window keeps away from this path)."""
    return factor(stacked(A, T), t)


def factor(K, t):
    """SuperLU of K (natural column order, partial pivoting); a loud stop where K is exactly singular."""
    try:
        return spla.splu(K, permc_spec="NATURAL", diag_pivot_thresh=1.0)
    except RuntimeError as exc:
        raise SimulationError(f"the chart matrix [A; T^T] of the sparse nullspace path is singular at t = {t:g} "
                              f"({exc}); a singular configuration outside the singular window") from None


class EntryChart:
    """K = [A(x); T^T] (CSC) and gamma(x, v) from one compiled call (fast.entries.terms_entries: the entries of A,
    duplicates summed, in the same pattern at every state) for a compiled workspace without prescribed motions (Phi_t = 0,
    no f''(t)); the slots of K are found once."""

    def __init__(self, ws, f: int):
        from ..fast.entries import entry_count, terms_entries
        p, n, m = ws.pack, ws.model.n, ws.m
        self.kernel, self.args, self.m, self.f = terms_entries, (p.prim, p.pval, p.mcols, p.mloc, p.mvec), m, f
        count = entry_count(p)
        self.vals, rows, cols = np.zeros(count), np.zeros(count, np.int64), np.zeros(count, np.int64)
        self.qe, self.ve, self.gamma = np.zeros(n + 1), np.zeros(n + 1), np.zeros(m)
        count = terms_entries(self.qe, self.ve, *self.args, self.vals, rows, cols, np.empty(0))
        self.rows, self.cols = rows, cols
        self.live = np.flatnonzero(cols[:count] < n)
        height = m + f
        keys = cols[self.live] * height + rows[self.live]
        tkeys = (np.arange(n)[:, None] * height + m + np.arange(f)[None, :]).ravel()     # T[j, i] at (m + i, j)
        allkeys, where = np.unique(np.r_[keys, tkeys], return_inverse=True)
        self.slot, self.tslot, self.size = where[: len(keys)], where[len(keys):], len(allkeys)
        self.indices = (allkeys % height).astype(np.int32)
        self.indptr = np.searchsorted(allkeys // height, np.arange(n + 1)).astype(np.int32)
        self.shape = (height, n)

    def lu(self, t, x, T):
        """The LU of K at x (chart_lu's)."""
        self.qe[:-1], self.ve[:] = x, 0.0
        self.kernel(self.qe, self.ve, *self.args, self.vals, self.rows, self.cols, np.empty(0))
        data = np.bincount(self.slot, self.vals[self.live], minlength=self.size)
        data[self.tslot] = T.ravel()
        return factor(sp.csc_matrix((data, self.indices, self.indptr), shape=self.shape), t)

    def gamma_at(self, x, v):
        """gamma (m,) at (x, v) (paper 000 eq. 6)."""
        self.qe[:-1], self.ve[:-1], self.ve[-1] = x, v, 0.0
        self.kernel(self.qe, self.ve, *self.args, self.vals, self.rows, self.cols, self.gamma)
        return self.gamma.copy()


def null_basis(lu, m, f):
    """Y (n, f) = K^-1 [0; I]: spans null(A) with T^T Y = I (K = [A; T^T] factored in ``lu``)."""
    E = np.zeros((m + f, f))
    E[m:] = np.eye(f)
    return lu.solve(E)


def orthonormal(Y):
    """Y (Y^T Y)^(-1/2) (paper 000 App. A: the nearest orthonormal basis; for one column Y / |Y|)."""
    return Y / np.linalg.norm(Y) if Y.shape[1] == 1 else polar_factor(Y)


def sigma_extremes(A, N, start=None, tol=0.0):
    """(sigma_min, sigma_1, (u, v)) of the sparse A (m, n) of full row rank with unit null vector(s) N (n, n - m):
    sigma_1 from the largest eigenvalue of A A^T; sigma_min as that of K = [A; s N^T] (s = sqrt(|A A^T|_1) >= sigma_1:
    K's singular values are A's and s) from the largest eigenvalue of (K^T K)^-1 = K^-1 K^-T by the LU of K (module
    docstring). sigma_min to the relative ``tol``, sigma_1 to max(tol, SIGMA1_TOL), from ``start`` = (u, v), the vectors of a nearby state, by
    :func:`largest_eigenvalue` (tol 0: ARPACK's full precision). The vectors are returned for the next call. (0, sigma_1, None)
    where K is singular."""
    S = A @ A.T
    n = A.shape[1]
    u0, v0 = start if start is not None else (np.ones(S.shape[0]), np.ones(n))
    big, u = largest_eigenvalue(lambda x: S @ x, S.shape[0], u0, max(tol, SIGMA1_TOL), power=False)
    scale = float(np.sqrt(abs(S).sum(axis=0).max()))
    try:
        lu = spla.splu(stacked(A, scale * N), permc_spec="NATURAL", diag_pivot_thresh=1.0)
    except RuntimeError:
        return 0.0, float(np.sqrt(big)), None
    inv, v = largest_eigenvalue(lambda x: lu.solve(lu.solve(np.ravel(x), trans="T")), n, v0, tol)
    return (float(1.0 / np.sqrt(inv)) if inv > 0 else 0.0), float(np.sqrt(big)), (u, v)


def largest_eigenvalue(apply, n, x0, tol, power=True):
    """(lambda, x): the largest eigenvalue and its vector of the symmetric positive (semi-)definite operator ``apply``
    (n, n): power iteration from x0 where ``power`` and tol > 0 (:func:`power_iteration`), else or where that does not
    settle ARPACK's Lanczos (eigsh, ncv LANCZOS_VECTORS). The largest eigenvalues of A A^T of a chain of equal cells
    cluster (power iteration never settled in 30 steps on the N-four-bar with 40 cells: ``power`` False there), the
    largest ones of (K^T K)^-1 do not (it settled at every accepted state)."""
    if tol > 0 and power:
        out = power_iteration(apply, x0, tol)
        if out is not None:
            return out
    op = spla.LinearOperator((n, n), matvec=apply, dtype=float)
    lam, x = spla.eigsh(op, k=1, which="LA", v0=x0, tol=tol, ncv=LANCZOS_VECTORS)
    return float(lam[0]), x[:, 0]


def power_iteration(apply, x, tol):
    """(lambda, x) after power iterations x <- B x / |B x| until two Rayleigh quotients agree to the relative tol (for a
    symmetric B its error is quadratic in the vector's: Golub & Van Loan, Matrix Computations, 4th ed., Sect. 8.2.1),
    None after POWER_STEPS iterations (eigenvalues too close for the start vector)."""
    x = np.ravel(x) / np.linalg.norm(x)
    last = None
    for _ in range(POWER_STEPS):
        y = apply(x)
        lam = float(x @ y)
        x = y / np.linalg.norm(y)
        if last is not None and abs(lam - last) <= tol * abs(lam):
            return lam, x
        last = lam
    return None


#: Lanczos basis size of ARPACK's estimates (eigsh ncv, its default)
LANCZOS_VECTORS = 20
#: relative precision of sigma_1: it enters only the ratios rho = sigma_r / sigma_1 of the singular window and the
#: tracker's screen (rho < 0.2), thresholds no number depends on to 1e-6; the crossing is located on sigma_r alone
SIGMA1_TOL = 1e-6
#: power iterations before ARPACK takes over (:func:`power_iteration`)
POWER_STEPS = 30
