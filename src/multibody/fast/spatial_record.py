"""The stored states of a spatial Lagrange run in one compiled call (issue 16: storing every accepted state of the
six-body linkage cost 0.7 ms per state, the step itself 0.4 ms).

:func:`record_batch` runs the per-state output kernel :func:`.spatial_step_kernels.record` (accelerations, the
minimum-norm multipliers, the violations, A, and the orthonormal basis N of A's left null space that the minimum-norm
multipliers are made with) over a stack of states and adds, per state, what certifies the reaction-uniqueness flags
(:mod:`.spatial_flags`, ``SpatialReactionFlags.certified``):

- ``|A^T N^T|_F^2``, the residual of the null basis (a left null vector has none);
- ``b = b_inf b_one >= |L^-1|_inf |L^-1|_1 >= |L^-1|_2^2`` for L the Cholesky factor of X X^T, X = A[active] (the
  independent rows), and ``|X|_F^2``: sigma_r(A) >= sigma_min(X) ~ 1 / sqrt b, a lower bound of the gap to A's left
  null space (fast.spatial_certify, step 1, with the round-off). Where X X^T is not positive definite, b is inf
  (nothing certified);
- the null basis refined once (:func:`refine`), the round-off bound of its residual, A's squared row and column norms
  (the bracket of |A|_2) and the sums over each pair's rows of N's entries times A's rows (eq. 27's B_X, and the
  joints' generalized reactions under lambda = N).
"""
from __future__ import annotations

import numpy as np
from numba import njit

EPS = np.finfo(np.float64).eps

from .spatial_step_kernels import envelope_solve, first_nonzero, gram_factor, record


@njit(cache=True)
def comparison_bounds(L, k):
    """(b_inf, b_one) with |L^-1|_inf <= b_inf and |L^-1|_1 <= b_one for the lower triangular L[:k, :k]: the largest
    entries of M(L)^-1 e and M(L)^-T e, M(L) the comparison matrix (|L_ii| on, -|L_ij| off the diagonal), since
    |L^-1| <= M(L)^-1 entrywise (Higham, Accuracy and Stability of Numerical Algorithms, 2nd ed., Thm 8.12); two
    substitutions within L's envelope (zeros left of each row's first non-zero skipped). Every term is >= 0, so the
    computed values are within a factor 1 + gamma_(3k) of the exact ones."""
    first = np.empty(k, dtype=np.int64)
    for i in range(k):
        first[i] = first_nonzero(L, i)
    x, y = np.empty(k), np.ones(k)
    b_inf, b_one = 0.0, 0.0
    for i in range(k):
        s = 1.0
        for l in range(first[i], i):
            s += abs(L[i, l]) * x[l]
        x[i] = s / abs(L[i, i])
        b_inf = max(b_inf, x[i])
    for i in range(k - 1, -1, -1):
        y[i] /= abs(L[i, i])
        b_one = max(b_one, y[i])
        for l in range(first[i], i):
            y[l] += abs(L[i, l]) * y[i]
    return b_inf, b_one


@njit(cache=True)
def certificate(G, N, p, active, X, Gc, group, out, rowsq, S):
    """N[:p] refined (:func:`refine`); out <- (|G^T N[:p]^T|_F^2 as computed, b_inf b_one (:func:`comparison_bounds`)
    of X X^T = L L^T (inf if not positive definite), |X|_F^2, the bound gamma_c | |G|^T |N^T| |_F of the residual's
    round-off (c the most non-zeros of a column of G: a product with an exact zero adds no rounding; Higham,
    Sect. 3.1), |G|_F^2, the largest squared column norm); rowsq <- the squared row norms; S (p, pairs, n) <- the
    pairs' sums sum_(i in X) N[k, i] G[i, :] (group[i]: row i's pair; eq. 27's B_X and the joints' reactions)."""
    m, n = G.shape
    r = active.shape[0]
    rowsq[:] = 0.0
    terms, colmax = 0, 0.0
    for j in range(n):
        count, c = 0, 0.0
        for i in range(m):
            x = G[i, j]
            if x != 0.0:
                count += 1
                c += x * x
                rowsq[i] += x * x
        terms, colmax = max(terms, count), max(colmax, c)
    out[4], out[5] = np.sum(rowsq), colmax
    fro = 0.0
    for a in range(r):
        for j in range(n):
            X[a, j] = G[active[a], j]
            fro += X[a, j] * X[a, j]
    out[2] = fro
    if gram_factor(X, Gc) <= 0.0:
        out[0], out[1], out[3] = np.inf, np.inf, np.inf
        return
    res, g, mag, absg = 0.0, np.empty(n), 0.0, np.empty(n)
    S[:, :, :] = 0.0
    for k in range(p):
        refine(G, N, k, active, X, Gc, g)
        absg[:] = 0.0
        for i in range(m):
            w = N[k, i]
            for j in range(n):
                S[k, group[i], j] += G[i, j] * w
                absg[j] += abs(G[i, j] * w)
        for j in range(n):
            res += g[j] * g[j]
            mag += absg[j] * absg[j]
    b_inf, b_one = comparison_bounds(Gc, r)
    out[0], out[1], out[3] = res, b_inf * b_one, (terms * EPS / (1 - terms * EPS)) * np.sqrt(mag)


@njit(cache=True)
def refine(G, N, k, active, X, Gc, g):
    """One step of iterative refinement of the null vector N[k] (the output kernel's, made with the M^-1-weighted
    Schur factor: residual ~ eps cond(X M^-1 X^T) |G|): N[k, active] -= (X X^T)^-1 X G^T N[k] (L L^T = X X^T in
    Gc), which removes the residual's part in X's row space (all of it, for a G of rank r, up to round-off); then
    orthogonalised against N[:k], normalised, and g <- G^T N[k]."""
    m, n = G.shape
    r = active.shape[0]
    residual(G, N[k], g)
    y = np.zeros(r)
    for a in range(r):
        for j in range(n):
            y[a] += X[a, j] * g[j]
    envelope_solve(Gc, y, r)
    for a in range(r):
        N[k, active[a]] -= y[a]
    for l in range(k):
        N[k, :] -= np.dot(N[l, :], N[k, :]) * N[l, :]
    N[k, :] /= np.sqrt(np.dot(N[k, :], N[k, :]))
    residual(G, N[k], g)


@njit(cache=True)
def residual(G, x, g):
    """g <- G^T x."""
    m, n = G.shape
    for j in range(n):
        g[j] = 0.0
    for i in range(m):
        if x[i] != 0.0:
            for j in range(n):
                g[j] += G[i, j] * x[i]


@njit(cache=True)
def record_batch(Y, active, dropped, tab, Minv, diag, f, tau, work, group, acc, mult, viol, CS, NS, info, rowsq, S):
    """For each state Y[s] = [q, v]: acc[s] = q'', mult[s] the minimum-norm multipliers, viol[s] = (max |Phi|,
    max |A v|), CS[s] = A, NS[s] = N (p, m), info[s] (6,), rowsq[s], S[s] = :func:`certificate`. Returns the index of
    the first state the output kernel declines (its Schur solve or row test; the caller takes the reference there),
    else -1. ``work`` = (phi, G, gamma, A, ga, B, S, lam, out, full, N, X, Gc) as SpatialStep's buffers."""
    phi, G, gamma, A, ga, B, Sc, lam, out, full, N, X, Gc = work
    n, p = f.shape[0], dropped.shape[0]
    for s in range(Y.shape[0]):
        pos, vel = record(Y[s], active, dropped, tab, Minv, diag, f, tau, phi, G, gamma, A, ga, B, Sc, lam, out,
                          full, N)
        if pos < 0:
            return s
        acc[s, :] = out[n:]
        mult[s, :] = full
        viol[s, 0], viol[s, 1] = pos, vel
        CS[s, :, :] = G
        certificate(G, N, p, active, X, Gc, group, info[s], rowsq[s], S[s])
        NS[s, :, :] = N[:p]
    return -1
