"""Compiled kernels of the per-step work of the Lagrange formulation on spatial director models (issue 16: the
compiled path covers spatial models too): the projection after an accepted step, the tangent-space error filter
and the per-step output, on the packed quadratic constraint table (:mod:`.spatial_kernels`). The planar
counterparts are :mod:`.step_kernels` (whose normal-equation solves these reuse); the readable references,
which define the numbers (tests/test_fast_spatial_step.py checks the agreement), are the same:

- projection: :func:`multibody.kinematics.solve_positions` / :func:`~multibody.kinematics.solve_velocities`
  (Gauss-Newton q -= A^+ Phi, paper 000 eq. 5 context; v += A^+ (-A v));
- error filter: ``Lagrange._tangent_error`` (:func:`multibody.linalg.row_space_filter`);
- output: ``Lagrange.accelerations`` (paper 003 eqs 4-9; multipliers: the minimum-norm solution of A^T lam =
  f - M q'') and the violations of ``simulation.recorder.Recorder``.

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
from .step_kernels import normal_solve, worst_violation

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
        fi = first_nonzero(L, i)
        first[i] = fi
        s = x[i]
        for l in range(fi, i):
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
    smax = 0.0
    for j in range(k):
        smax = max(smax, S[j, j])
    if smax <= 0.0:
        return -1.0
    first = np.empty(k, dtype=np.int64)
    ratio = np.inf
    for i in range(k):
        fi = first_nonzero(S, i)
        first[i] = fi
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
def _gauss_newton(q, active, phi, X, tau, Gc, r, dx):
    """q -= X^+ phi[active] (the minimum-norm step); False if X X^T is ill-conditioned."""
    n = q.shape[0]
    if gram_factor(X, Gc) < tau:
        return False
    for a in range(active.shape[0]):
        r[a] = phi[active[a]]
    normal_solve(X, n, Gc, r, False, dx)
    q -= dx
    return True


@njit(cache=True)
def project(q, v, active, tab, limit, iterations, polish, tau, phi, G, X, Gc, r, dx):
    """In place: q onto Phi = 0 (at most ``iterations`` Gauss-Newton steps until max |Phi| <= limit over all rows,
    then ``polish`` more with the last Phi, A, as kinematics.solve_positions / _polish), then v += X^+ (-X v).
    Returns the smallest Cholesky pivot ratio of X X^T at the projected q, or -1 (q, v partly updated) if not
    converged or X X^T was ill-conditioned (ratio < tau): the caller runs the reference."""
    hk, hi, hj, hv, gk, gi, gv, c = tab
    converged = False
    for _ in range(iterations):
        gather_rows(q, active, hk, hi, hj, hv, gk, gi, gv, c, phi, G, X)
        worst = worst_violation(phi)
        if not np.isfinite(worst):
            return -1.0
        if worst <= limit:
            converged = True
            break
        if not _gauss_newton(q, active, phi, X, tau, Gc, r, dx):
            return -1.0
    if not converged:
        return -1.0
    for k in range(polish):
        if k:
            gather_rows(q, active, hk, hi, hj, hv, gk, gi, gv, c, phi, G, X)
        if worst_violation(phi) == 0.0:
            break
        if not _gauss_newton(q, active, phi, X, tau, Gc, r, dx):
            return -1.0
    gather_rows(q, active, hk, hi, hj, hv, gk, gi, gv, c, phi, G, X)
    n = q.shape[0]
    ratio = gram_factor(X, Gc)
    if ratio < tau:
        return -1.0
    for a in range(active.shape[0]):
        s = 0.0
        for j in range(n):
            s -= X[a, j] * v[j]
        r[a] = s
    normal_solve(X, n, Gc, r, False, dx)
    v += dx
    return ratio


@njit(cache=True)
def tangent_error(y, err, weight, active, tab, tau, phi, G, X, Gc, ax, dx, out):
    """out <- err with the parts of its position and velocity errors in the row space of A(q) scaled by
    ``weight`` (step_kernels.tangent_error: projector applied twice); False if X X^T is ill-conditioned."""
    n = X.shape[1]
    hk, hi, hj, hv, gk, gi, gv, c = tab
    out[:] = err
    gather_rows(y[:n], active, hk, hi, hj, hv, gk, gi, gv, c, phi, G, X)
    if gram_factor(X, Gc) < tau:
        return False
    tangent, normal = np.empty(n), np.empty(n)
    for part in range(2):
        tangent[:] = err[part * n: (part + 1) * n]
        normal[:] = 0.0
        for _ in range(2):      # twice: the second pass removes the round-off the first left
            ax[:] = np.dot(X, tangent)
            normal_solve(X, n, Gc, ax, False, dx)
            tangent -= dx
            normal += dx
        for j in range(n):
            out[part * n + j] = tangent[j] + weight * normal[j]
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
