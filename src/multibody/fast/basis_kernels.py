"""Compiled per-step work of ``--basis continuation`` (paper 000 eq. 22 and App. A; issue 16 item 1): the tangent
block of Q_k expm(Omega h) and its re-orthogonalisation in one call, instead of SciPy's expm of the whole (n, n)
matrix. The readable reference is :func:`multibody.linalg.tangent.continue_basis`; tests/test_fast_nullspace.py
checks the agreement.
"""
from __future__ import annotations

import numpy as np
from numba import njit

from .kernels import assemble
from .nullspace_kernels import GRAM_PIVOT_RATIO, pinv_apply, smooth_pinv

#: the Taylor series of exp(Omega h / s) is summed with s such that |Omega h|_1 / s <= this (Al-Mohy & Higham,
#: "Computing the action of the matrix exponential", SIAM J. Sci. Comput. 33 (2011) 488-511, Sect. 3: scaling
#: keeps the terms decreasing, so the series is summed to round-off without cancellation)
TAYLOR_SCALED_NORM = 0.5


@njit(cache=True)
def expm_action(Omega, h, V):
    """expm(Omega h) V (n, k) by the scaled Taylor series (Al-Mohy & Higham 2011, Sect. 3): s = ceil(|Omega h|_1 /
    TAYLOR_SCALED_NORM) substeps, each summed until the term falls below eps times the sum (max norm)."""
    n = Omega.shape[0]
    norm = 0.0
    for j in range(n):
        c = 0.0
        for i in range(n):
            c += abs(Omega[i, j])
        norm = max(norm, c)
    norm *= abs(h)
    s = max(1, int(np.ceil(norm / TAYLOR_SCALED_NORM)))
    B = Omega * (h / s)
    out = V.copy()
    for _ in range(s):
        term = out.copy()
        for k in range(1, 60):
            term = (B @ term) / k
            out += term
            if np.max(np.abs(term)) <= 1e-17 * np.max(np.abs(out)):
                break
    return out


@njit(cache=True)
def continue_basis(Q1, T, Omega, h, Q1_new):
    """T_{k+1} (n, f): the tangent block of [Q1 | T] expm(Omega h) (eq. 22) re-orthogonalised against Q1_new
    (App. A: X = (I - Q1_new Q1_new^T) T, X (X^T X)^(-1/2) by the symmetric eigen-decomposition), as
    linalg.tangent.continue_basis."""
    n, r = Q1.shape
    f = T.shape[1]
    E = np.zeros((n, f))
    for j in range(f):
        E[r + j, j] = 1.0
    W = expm_action(Omega, h, E)
    Tc = np.ascontiguousarray(Q1) @ np.ascontiguousarray(W[:r]) + np.ascontiguousarray(T) @ np.ascontiguousarray(W[r:])
    X = Tc - Q1_new @ (Q1_new.T @ Tc)
    lam, V = np.linalg.eigh(X.T @ X)
    return X @ ((V / np.sqrt(lam)) @ V.T)


@njit(cache=True)
def omega(x, v, eps, prim, pval, mcols, mloc, mvec, Q1, T, perm_r, R1, rel, qe, ve, A, gamma):
    """Omega (n, n) of eqs 19-20 for Q = [Q1 | T] (ContinuationNullSpace._omega with
    linalg.tangent.omega_continued): A' Q by the central difference (A(x + eps v) - A(x - eps v)) Q / (2 eps) (A of
    the builder primitives does not depend on t), its rows ``perm_r`` (the independent ones), R1^-T applied as the
    smooth pseudo-inverse of R1^T (mu = rel s_max; nullspace_kernels.smooth_pinv: its Tikhonov form by Cholesky
    where R1 is well conditioned, else the SVD, as the reference), then the blocks Omega_11 = L - L^T
    (L = stril(B_1)), Omega_21 = B_2, Omega_12 = -B_2^T, Omega_22 = 0 of B = (R1^-T P_r^T A' Q)^T."""
    n, r = Q1.shape
    f = T.shape[1]
    qe[n] = 0.0
    ve[:] = 0.0
    qe[:n] = x + eps * v
    assemble(qe, ve, prim, pval, mcols, mloc, mvec, A, gamma)
    Ad = np.empty((r, n))
    for i in range(r):
        Ad[i] = A[perm_r[i], :n]
    qe[:n] = x - eps * v
    assemble(qe, ve, prim, pval, mcols, mloc, mvec, A, gamma)
    AdQ = np.zeros((r, n))                          # column j of Q: Q1[:, j] (j < r), T[:, j - r]
    for i in range(r):
        for l in range(n):
            d = (Ad[i, l] - A[perm_r[i], l]) / (2.0 * eps)
            if d != 0.0:
                for j in range(r):
                    AdQ[i, j] += d * Q1[l, j]
                for j in range(f):
                    AdQ[i, r + j] += d * T[l, j]
    Rt = np.ascontiguousarray(R1.T)
    K = np.empty((r, r))                            # the Cholesky factor on path 0
    path, P = smooth_pinv(Rt, rel, GRAM_PIVOT_RATIO, np.zeros(r), K, 0)
    B = np.empty((n, r))
    col = np.empty(r)
    for j in range(n):
        pinv_apply(Rt, path, K, P, np.ascontiguousarray(AdQ[:, j]), col)
        B[j] = col
    Om = np.zeros((n, n))
    for i in range(r):
        for j in range(i):
            Om[i, j] = B[i, j]
            Om[j, i] = -B[i, j]
    for i in range(r, n):
        for j in range(r):
            Om[i, j] = B[i, j]
            Om[j, i] = -B[i, j]
    return Om
