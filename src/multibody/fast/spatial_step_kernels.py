"""Compiled kernels of the per-step work of the Lagrange formulation on spatial director models (issue 16: the
compiled path covers spatial models too): the per-step output on the packed quadratic constraint table
(:mod:`.spatial_kernels`), and the envelope Cholesky factorisation and row ordering that the solves on X's
non-zeros (:mod:`.spatial_sparse`: right-hand side, projection, error filter) share. The planar counterparts are
:mod:`.step_kernels`; the readable references, which define the numbers (tests/test_fast_spatial_step.py checks
the agreement), are the same:

- output: ``Lagrange.accelerations`` (paper 003 eqs 4-9; multipliers: the minimum-norm solution of A^T lam =
  f - M q'') and the violations of ``simulation.recorder.Recorder``;
- projection: :func:`multibody.kinematics.solve_positions` / :func:`~multibody.kinematics.solve_velocities`
  (Gauss-Newton q -= A^+ Phi, paper 000 eq. 5 context; v += A^+ (-A v));
- error filter: ``Lagrange._tangent_error`` (:func:`multibody.linalg.row_space_filter`).

Every pseudo-inverse uses X = A[active], the formulation's independent rows (``Lagrange._choose_rows``; all
rows when none is redundant), and the normal equations X X^T by Cholesky (step_kernels.gram_cholesky), used
only while its smallest pivot ratio is >= ``tau``. X spans the row space of A (the other rows are combinations
of X's on the manifold), so A^+ r = X^+ r[active] for consistent r and the projector onto A's row space is X's.
The multipliers: lam with lam[active] the Schur solve's and 0 elsewhere solves A^T lam = f - M q''; the
minimum-norm one is lam - N N^T lam, N an orthonormal basis of A's left null space, one vector e_d - c per
dropped row d (a_d = X^T c, c from the Schur factor: X M^-1 a_d = S c).
"""
from __future__ import annotations

import numpy as np
from numba import njit

from .kernels import cholesky_solve
from .spatial_kernels import lagrange_rhs, quad_eval, quad_gamma

#: a dropped row counts as a combination of the active ones while |a_d - X^T c|_inf <= this times |a_d|_inf;
#: the reference's rank decision (RankTolerance, sqrt(eps) ~ 1.5e-8 of s_max) treats it as dependent then too
DEPENDENT_ROW = 1e-10


@njit(cache=True)
def gather_rows(q, active, hk, hi, hj, hv, gk, gi, gv, c, phi, G, X):
    """phi, G <- Phi(q), Phi_q(q) (all rows); X <- G[active]."""
    quad_eval(q, hk, hi, hj, hv, gk, gi, gv, c, phi, G)
    for a in range(active.shape[0]):
        X[a, :] = G[active[a], :]


@njit(cache=True)
def sparse_gram(X, w, Gc):
    """Gc (r, r), lower triangle <- X diag(w) X^T, column by column over X's non-zeros (a row of a director
    model's A has at most 24 of n; ~3 rows per column on the six-body linkage instead of all r). The rows of
    each column are gathered in one row-major pass over X."""
    r, n = X.shape
    for a in range(r):
        for b in range(a + 1):
            Gc[a, b] = 0.0
    count = np.zeros(n, dtype=np.int64)
    rows = np.empty((n, r), dtype=np.int64)
    for a in range(r):
        for j in range(n):
            if X[a, j] != 0.0:
                rows[j, count[j]] = a
                count[j] += 1
    for j in range(n):
        for p in range(count[j]):
            a = rows[j, p]
            xa = X[a, j] * w[j]
            for s in range(p + 1):
                Gc[a, rows[j, s]] += xa * X[rows[j, s], j]


@njit(cache=True)
def envelope_solve(L, x, k):
    """x[:k] <- (L L^T)^-1 x[:k] (kernels.cholesky_solve) with L from :func:`envelope_cholesky`, skipping the
    zeros left of each row's first non-zero."""
    first = np.empty(k, dtype=np.int64)
    for i in range(k):
        first[i] = first_nonzero(L, i)
    envelope_solve_in(L, x, k, first)


@njit(cache=True)
def envelope_solve_in(L, x, k, first):
    """x[:k] <- (L L^T)^-1 x[:k] with L zero left of column first[i] in row i (:func:`envelope_factor`)."""
    for i in range(k):
        s = x[i]
        for l in range(first[i], i):
            s -= L[i, l] * x[l]
        x[i] = s / L[i, i]
    for i in range(k - 1, -1, -1):
        x[i] /= L[i, i]
        for l in range(first[i], i):
            x[l] -= L[i, l] * x[i]


@njit(cache=True)
def first_nonzero(L, i):
    """The first column j <= i with L[i, j] != 0 (i if none before the diagonal)."""
    for j in range(i):
        if L[i, j] != 0.0:
            return j
    return i


@njit(cache=True)
def envelope_cholesky(S, k):
    """kernels.cholesky (in place lower factor of the SPD S[:k, :k], returns the smallest pivot ratio min_j
    L_jj^2 / max_j S_jj, <= 0 if not positive definite) within the envelope: L[i, j] = 0 left of row i's first
    non-zero (George & Liu, Computer Solution of Large Sparse Positive Definite Systems, Sect. 4.2), so each dot
    product starts there. Same operations on the non-zeros, no work on the zeros: with the rows in reverse
    Cuthill-McKee order (:func:`rcm_rows`) the six-body linkage's 59 rows cost
    2.8e3 multiply-adds instead of 3.4e4."""
    first = np.empty(k, dtype=np.int64)
    for i in range(k):
        first[i] = first_nonzero(S, i)
    return envelope_factor(S, k, first)


@njit(cache=True)
def envelope_factor(S, k, first):
    """:func:`envelope_cholesky` with the envelope given: S[i, j] = 0 for j < first[i] (the value-based first
    non-zero, or a structural one left of it, which adds only exact zeros); entries left of it are not read."""
    smax = 0.0
    for j in range(k):
        smax = max(smax, S[j, j])
    if smax <= 0.0:
        return -1.0
    ratio = np.inf
    for i in range(k):
        fi = first[i]
        for j in range(fi, i + 1):
            x = S[i, j]
            for l in range(max(fi, first[j]), j):
                x -= S[i, l] * S[j, l]
            if j < i:
                S[i, j] = x / S[j, j]
            else:
                if x <= 0.0:
                    return -1.0
                ratio = min(ratio, x / smax)
                S[i, i] = np.sqrt(x)
    return ratio


@njit(cache=True)
def gram_factor(X, Gc):
    """Gc <- lower Cholesky factor of X X^T (:func:`sparse_gram`, :func:`envelope_cholesky`); its smallest pivot
    ratio min_j L_jj^2 / max_j (X X^T)_jj (<= 0: not positive definite)."""
    k = X.shape[0]
    if k == 0:
        return 1.0
    sparse_gram(X, np.ones(X.shape[1]), Gc)
    return envelope_cholesky(Gc, k)


@njit(cache=True)
def schur_rhs(y, active, hk, hi, hj, hv, gk, gi, gv, c, minv, f, tau, phi, G, gamma, X, ga, B, S, lam, out):
    """spatial_kernels.lagrange_rhs for a diagonal mass matrix (minv (n,) = 1 / diag M): the same Schur
    complement solve (paper 003 eqs 4-9; S = X M^-1 X^T, S lam = X M^-1 f - gamma, q'' = M^-1 (f - X^T lam)),
    with S from X's non-zeros (:func:`sparse_gram`) instead of dense products. Leaves phi, G = Phi, Phi_q (all
    rows), B = X M^-1, S = its Cholesky factor, lam (r,); False if the smallest pivot ratio of S is below tau."""
    n, r = f.shape[0], active.shape[0]
    q, v = y[:n], y[n:]
    quad_eval(q, hk, hi, hj, hv, gk, gi, gv, c, phi, G)
    quad_gamma(v, hk, hi, hj, hv, gamma)
    for a in range(r):
        s = -gamma[active[a]]
        for j in range(n):
            x = G[active[a], j]
            X[a, j] = x
            B[a, j] = x * minv[j]
            s += B[a, j] * f[j]
        lam[a] = s
    if r:
        sparse_gram(X, minv, S)
        if envelope_cholesky(S, r) < tau:
            return False
        envelope_solve(S, lam, r)
    g = f.copy()
    for a in range(r):
        for j in range(n):
            g[j] -= X[a, j] * lam[a]
    for j in range(n):
        out[j] = v[j]
        out[n + j] = g[j] * minv[j]
    return True


@njit(cache=True)
def min_norm_multipliers(G, active, dropped, lam, B, S, full, N):
    """full (m,) <- the minimum-norm solution of A^T x = A[active]^T lam (A = G, all rows), with B = X M^-1 and
    S the Cholesky factor of X M^-1 X^T left by the Schur solve; N (p, m) workspace. False if a dropped row is
    not a combination of the active ones (DEPENDENT_ROW)."""
    m, n = G.shape
    r, p = active.shape[0], dropped.shape[0]
    full[:] = 0.0
    for a in range(r):
        full[active[a]] = lam[a]
    cv = np.empty(r)
    for k in range(p):
        d = dropped[k]
        for a in range(r):
            s = 0.0
            for j in range(n):
                s += B[a, j] * G[d, j]
            cv[a] = s
        cholesky_solve(S, cv, r)
        scale, worst = 0.0, 0.0
        for j in range(n):
            s = G[d, j]
            for a in range(r):
                s -= cv[a] * G[active[a], j]
            scale, worst = max(scale, abs(G[d, j])), max(worst, abs(s))
        if worst > DEPENDENT_ROW * scale:
            return False
        N[k, :] = 0.0
        N[k, d] = 1.0
        for a in range(r):
            N[k, active[a]] = -cv[a]
        for l in range(k):          # Gram-Schmidt against the earlier null vectors, then normalise
            N[k, :] -= np.dot(N[l, :], N[k, :]) * N[l, :]
        N[k, :] /= np.sqrt(np.dot(N[k, :], N[k, :]))
    for k in range(p):
        full -= np.dot(N[k, :], full) * N[k, :]
    return True


@njit(cache=True)
def record(y, active, dropped, tab, Minv, diag, f, tau, phi, G, gamma, A, ga, B, S, lam, out, full, N):
    """The per-state output at y = [q, v]: out <- [v, q''] (spatial_kernels.lagrange_rhs), full <- the
    minimum-norm multipliers (:func:`min_norm_multipliers`), G <- A (all rows); returns (max |Phi|, max |A v|)
    or (-1, -1) when the Schur solve or the row test declines (the caller takes the reference)."""
    hk, hi, hj, hv, gk, gi, gv, c = tab
    n = f.shape[0]
    if diag:
        ok = schur_rhs(y, active, hk, hi, hj, hv, gk, gi, gv, c, np.diag(Minv).copy(), f, tau, phi, G, gamma,
                       A[:, :n], ga, B, S, lam, out)
    else:
        ok = lagrange_rhs(y, active, hk, hi, hj, hv, gk, gi, gv, c, Minv, diag, f, tau, phi, G, gamma, A, ga, B, S,
                          lam, out)
    if not ok:
        return -1.0, -1.0
    if not min_norm_multipliers(G, active, dropped, lam, B, S, full, N):
        return -1.0, -1.0
    pos, vel = 0.0, 0.0
    for k in range(G.shape[0]):
        s = 0.0
        for j in range(n):
            s += G[k, j] * y[n + j]
        pos, vel = max(pos, abs(phi[k])), max(vel, abs(s))
    return pos, vel


def rcm_rows(table, rows) -> np.ndarray:
    """``rows`` (int64) reordered by reverse Cuthill-McKee on the structural pattern of X X^T (X = Phi_q[rows]: the
    entries of the packed table, fast.spatial.QuadraticTable, not the values, which vanish by chance at aligned
    configurations): the order in which :func:`envelope_cholesky` has small envelopes. A permutation of the rows
    of X changes none of the solves' results beyond round-off (S = X M^-1 X^T permuted symmetrically)."""
    import scipy.sparse as sp
    from scipy.sparse.csgraph import reverse_cuthill_mckee
    rows = np.asarray(rows, dtype=np.int64)
    if len(rows) < 3:
        return np.ascontiguousarray(rows)
    hk, hi, _, _, gk, gi, _, _ = table.tab
    P = sp.csr_matrix((np.ones(len(hk) + len(gk)), (np.r_[hk, gk], np.r_[hi, gi])), shape=(table.m, table.n))[rows]
    P.data[:] = 1.0
    order = reverse_cuthill_mckee(sp.csr_matrix(P @ P.T), symmetric_mode=True)
    return np.ascontiguousarray(rows[order], dtype=np.int64)
