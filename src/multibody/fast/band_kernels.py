"""Compiled band solves for the Schur complement S = A D A^T of a model whose constraint rows couple few others
(issue 16 item 2: chains and other open or weakly closed mechanisms), D diagonal (M^-1 of a diagonal constant
mass matrix for the accelerations, the identity for the minimum-norm solves of the projection).

A is read as the entry triplets of :func:`.entries.terms_entries`. The rows of S are numbered in reverse
Cuthill-McKee order (George & Liu, Computer Solution of Large Sparse Positive Definite Systems, 1981, Sect. 4.3),
once per model (:mod:`.band`), so S is a band matrix of half bandwidth w (w = 3 for a planar chain of revolute
joints, whatever its length). S is formed from a fixed list of entry pairs that share a column (no dense
product), factored by band Cholesky (Golub & Van Loan, Matrix Computations, 4th ed., Sect. 4.3.6: the factor
keeps the band, no fill outside it) in O(m w^2) and solved in O(m w). The method is the range-space (Schur)
solve of paper 000 eq. 3 with M eliminated, as :func:`.kernels.schur_solve` and the SuperLU path
(linalg.sparse.schur_accelerations); so is its limit: it declines (returns False) where the smallest pivot
ratio min_j L_jj^2 / max_j S_jj falls below ``tau`` (near a singular configuration, redundant rows), and the
caller takes its reference path (tests/test_fast_band.py: the same numbers as a dense solve).
"""
from __future__ import annotations

import numpy as np
from numba import njit

from .entries import terms_entries
from .step_kernels import constraint_phi, worst_violation


@njit(cache=True)
def band_gram(vals, cols, n, d, pairs, S):
    """S (m, w + 1) <- the lower band of A D A^T: S[i, i - j] = sum over entries e of row i, f of row j with the
    same column c < n of vals[e] vals[f] d[c]; ``pairs`` = (pe, pf, pi, pd, pw): the entry pairs, their band
    position (row pi, offset pd) and weight pw (2 for two distinct entries of one row and column, else 1)."""
    pe, pf, pi, pd, pw = pairs
    S[:, :] = 0.0
    for p in range(pe.shape[0]):
        e, f = pe[p], pf[p]
        S[pi[p], pd[p]] += pw[p] * vals[e] * vals[f] * d[cols[e]]


@njit(cache=True)
def band_cholesky(S):
    """In place lower band Cholesky factor of S (m, w + 1) (S[i, i - j] = S_ij); returns the smallest pivot
    ratio min_j L_jj^2 / max_j S_jj (<= 0 if S is not positive definite), as kernels.cholesky."""
    m, w = S.shape[0], S.shape[1] - 1
    smax = 0.0
    for j in range(m):
        smax = max(smax, S[j, 0])
    ratio = np.inf
    for j in range(m):
        d = S[j, 0]
        for l in range(max(0, j - w), j):
            d -= S[j, j - l] * S[j, j - l]
        if d <= 0.0 or smax <= 0.0:
            return -1.0
        ratio = min(ratio, d / smax)
        ljj = np.sqrt(d)
        S[j, 0] = ljj
        for i in range(j + 1, min(j + w, m - 1) + 1):
            x = S[i, i - j]
            for l in range(max(0, i - w), j):
                x -= S[i, i - l] * S[j, j - l]
            S[i, i - j] = x / ljj
    return ratio


@njit(cache=True)
def band_cholesky_solve(L, x):
    """x (m,) <- (L L^T)^-1 x with the band factor of :func:`band_cholesky`."""
    m, w = L.shape[0], L.shape[1] - 1
    for i in range(m):
        s = x[i]
        for l in range(max(0, i - w), i):
            s -= L[i, i - l] * x[l]
        x[i] = s / L[i, 0]
    for i in range(m - 1, -1, -1):
        s = x[i]
        for l in range(i + 1, min(i + w, m - 1) + 1):
            s -= L[l, l - i] * x[l]
        x[i] = s / L[i, 0]


@njit(cache=True)
def schur_band(vals, rows, cols, count, n, minv, f, gamma, tau, iperm, pairs, S, lam, acc):
    """acc (n,) from M acc + A^T lam = f, A acc = gamma with M^-1 = diag(minv) by the Schur complement
    (:func:`.kernels.schur_solve`: S lam = A M^-1 f - gamma, acc = M^-1 (f - A^T lam)) in band form; lam (m,) in
    the band order of the rows (row i at iperm[i]). False (nothing valid) when S's pivot ratio is below tau."""
    m = lam.shape[0]
    for i in range(m):
        lam[iperm[i]] = -gamma[i]
    for e in range(count):
        c = cols[e]
        if c < n:
            lam[iperm[rows[e]]] += vals[e] * minv[c] * f[c]
    band_gram(vals, cols, n, minv, pairs, S)
    if m and band_cholesky(S) < tau:
        return False
    band_cholesky_solve(S, lam)
    acc[:] = f
    for e in range(count):
        c = cols[e]
        if c < n:
            acc[c] -= vals[e] * lam[iperm[rows[e]]]
    for k in range(n):
        acc[k] *= minv[k]
    return True


@njit(cache=True)
def band_rhs(y, ddf, pk, minv, f, tau, iperm, pairs, work):
    """y' = [v, q''] (2n,) of the Lagrange formulation at y = [q, v] (kernels.lagrange_rhs with the Schur solve
    in band form); returns (y', ok), ok False where :func:`schur_band` declines (the caller's reference path).
    pk = (prim, pval, mcols, mloc, mvec); work = (qe, ve (n + 1,), vals, rows, cols (entries), gamma, lam (m,),
    S (m, w + 1))."""
    prim, pval, mcols, mloc, mvec = pk
    qe, ve, vals, rows, cols, gamma, lam, S = work
    n = f.shape[0]
    for i in range(n):
        qe[i] = y[i]
        ve[i] = y[n + i]
    qe[n], ve[n] = 0.0, 0.0
    count = terms_entries(qe, ve, prim, pval, mcols, mloc, mvec, vals, rows, cols, gamma)
    for i in range(gamma.shape[0]):
        gamma[i] += ddf[i]
    out = np.empty(2 * n)
    out[:n] = y[n: 2 * n]
    ok = schur_band(vals, rows, cols, count, n, minv, f, gamma, tau, iperm, pairs, S, lam, out[n:])
    return out, ok


@njit(cache=True)
def _gram(vals, cols, n, pairs, tau, G):
    """G <- band Cholesky factor of A A^T; False if its pivot ratio is below tau (step_kernels.gram_cholesky)."""
    band_gram(vals, cols, n, np.ones(n), pairs, G)
    return G.shape[0] == 0 or band_cholesky(G) >= tau


@njit(cache=True)
def _normal_solve(vals, rows, cols, count, n, iperm, G, b, x):
    """x (n,) = A^+ b = A^T (A A^T)^-1 b for b (m,) with G from :func:`_gram` (step_kernels.normal_solve)."""
    y = np.empty(b.shape[0])
    for i in range(b.shape[0]):
        y[iperm[i]] = b[i]
    band_cholesky_solve(G, y)
    x[:] = 0.0
    for e in range(count):
        c = cols[e]
        if c < n:
            x[c] += vals[e] * y[iperm[rows[e]]]


@njit(cache=True)
def _apply(vals, rows, cols, count, n, x, out):
    """out (m,) = A x."""
    out[:] = 0.0
    for e in range(count):
        c = cols[e]
        if c < n:
            out[rows[e]] += vals[e] * x[c]


@njit(cache=True)
def _newton(q, qe, ve, pk, tau, iperm, pairs, work, phi, dx):
    """q -= A^+ Phi with A at qe (step_kernels._gauss_newton); False if A A^T is ill-conditioned."""
    vals, rows, cols, G = work
    n = q.shape[0]
    count = terms_entries(qe, ve, pk[0], pk[1], pk[2], pk[3], pk[4], vals, rows, cols, np.empty(0))
    if not _gram(vals, cols, n, pairs, tau, G):
        return False
    _normal_solve(vals, rows, cols, count, n, iperm, G, phi, dx)
    for j in range(n):
        q[j] -= dx[j]
    return True


@njit(cache=True)
def band_project(q, v, pk, poff, shift, dshift, control, iperm, pairs, work):
    """In place: q onto Phi = 0 and v onto A v + Phi_t = 0, the iterations of step_kernels.project (the same
    stopping rule and polish steps) with the band minimum-norm solves. control (limit, iterations, polish, tau);
    work (vals, rows, cols, G (m, w + 1)). False where step_kernels.project would decline."""
    limit, iterations, polish, tau = control
    vals, rows, cols, G = work
    n, m = q.shape[0], shift.shape[0]
    qe, ve, phi, dx = np.zeros(n + 1), np.zeros(n + 1), np.empty(m), np.empty(n)
    converged = False
    for _ in range(iterations):
        qe[:n] = q
        constraint_phi(qe, ve, pk[0], pk[1], poff, pk[2], pk[3], pk[4], shift, phi)
        worst = worst_violation(phi)
        if not np.isfinite(worst):
            return False
        if worst <= limit:
            converged = True
            break
        if not _newton(q, qe, ve, pk, tau, iperm, pairs, work, phi, dx):
            return False
    if not converged:
        return False
    for _ in range(polish):
        qe[:n] = q
        constraint_phi(qe, ve, pk[0], pk[1], poff, pk[2], pk[3], pk[4], shift, phi)
        if not _newton(q, qe, ve, pk, tau, iperm, pairs, work, phi, dx):
            return False
    qe[:n] = q
    count = terms_entries(qe, ve, pk[0], pk[1], pk[2], pk[3], pk[4], vals, rows, cols, np.empty(0))
    _apply(vals, rows, cols, count, n, v, phi)
    for i in range(m):     # phi <- -(A v + Phi_t), Phi_t = -dshift
        phi[i] = dshift[i] - phi[i]
    if not _gram(vals, cols, n, pairs, tau, G):
        return False
    _normal_solve(vals, rows, cols, count, n, iperm, G, phi, dx)
    for j in range(n):
        v[j] += dx[j]
    return True


@njit(cache=True)
def band_tangent_error(y, err, weight, forced, pk, tau, iperm, pairs, work, out):
    """step_kernels.tangent_error with the band minimum-norm solves: the parts of err[:n], err[n:2n] in the row
    space of A(q) scaled by ``weight``, the projection applied twice; plus, counted whole on the velocity part where
    ``forced``, the change the tangential position error forces (:func:`band_forced_change`). False (out not valid)
    if A A^T is ill-conditioned."""
    vals, rows, cols, G = work
    n, m = (y.shape[0]) // 2, iperm.shape[0]
    out[:] = err
    qe = np.zeros(n + 1)
    qe[:n] = y[:n]
    count = terms_entries(qe, np.zeros(n + 1), pk[0], pk[1], pk[2], pk[3], pk[4], vals, rows, cols, np.empty(0))
    if not _gram(vals, cols, n, pairs, tau, G):
        return False
    tangent, normal, ax, dx, u = np.empty(n), np.empty(n), np.empty(m), np.empty(n), np.empty(n)
    for part in range(2):
        tangent[:] = err[part * n: (part + 1) * n]
        normal[:] = 0.0
        for _ in range(2):
            _apply(vals, rows, cols, count, n, tangent, ax)
            _normal_solve(vals, rows, cols, count, n, iperm, G, ax, dx)
            for j in range(n):
                tangent[j] -= dx[j]
                normal[j] += dx[j]
        for j in range(n):
            out[part * n + j] = tangent[j] + weight * normal[j]
        if part == 0:
            u[:] = tangent      # the tangential position error
    if forced:
        band_forced_change(y, u, pk, qe, iperm, work, count, dx)
        for j in range(n):
            out[n + j] += dx[j]
    return True


@njit(cache=True)
def band_forced_change(y, u, pk, qe, iperm, work, count, dv):
    """dv (n,) <- -A^+ A'(v) u (step_kernels.forced_change with the band solve; Lagrange._forced_change,
    formulations.velocity_error.turn_velocity_change; paper 000 eq. 15, paper 003 eqs 4-9), v = y[n:2n]:
    A'(v) u = -(gamma(v + c u) - gamma(v - c u)) / (4 c), c = |v| / |u| (gamma of :func:`.entries.terms_entries` at
    qe, where A's entries were evaluated: they keep their values), A^+ = A^T (A A^T)^-1 with the band factor in
    ``work`` (A of full row rank). ``count``: the number of A's entries."""
    n = u.shape[0]
    vals, rows, cols = work[0], work[1], work[2]
    m = iperm.shape[0]
    dv[:] = 0.0
    v = y[n:2 * n]
    size, speed = np.sqrt(np.sum(u * u)), np.sqrt(np.sum(v * v))
    if size == 0.0 or speed == 0.0 or m == 0:
        return
    c = speed / size
    rate, gamma, ve = np.zeros(m), np.empty(m), np.zeros(n + 1)
    for sign in (1.0, -1.0):
        for j in range(n):
            ve[j] = v[j] + sign * c * u[j]
        terms_entries(qe, ve, pk[0], pk[1], pk[2], pk[3], pk[4], vals, rows, cols, gamma)
        for i in range(m):
            rate[i] -= sign * gamma[i] / (4.0 * c)
    _normal_solve(vals, rows, cols, count, n, iperm, work[3], rate, dv)
    for j in range(n):
        dv[j] = -dv[j]


@njit(cache=True)
def band_violations(y, shift, dshift, pk, poff, vals, rows, cols, phi):
    """(max |Phi|, max |A v + Phi_t|) at y = [q, v] (step_kernels.violations with A as the entry triplets (vals,
    rows, cols) at q, :func:`band_rhs`'s); Phi_t = -dshift."""
    n, m = y.shape[0] // 2, phi.shape[0]
    qe = np.zeros(n + 1)
    qe[:n] = y[:n]
    constraint_phi(qe, np.zeros(n + 1), pk[0], pk[1], poff, pk[2], pk[3], pk[4], shift, phi)
    av = np.empty(m)
    _apply(vals, rows, cols, vals.shape[0], n, y[n: 2 * n], av)
    pos, vel = 0.0, 0.0
    for i in range(m):
        pos, vel = max(pos, abs(phi[i])), max(vel, abs(av[i] - dshift[i]))
    return pos, vel


@njit(cache=True)
def band_record_batch(Y, pk, minv, f, tau, iperm, pairs, work, poff, acc, lam, viol, vals):
    """The stored states Y (k, 2n) of a model without prescribed motions at once (simulation.record_batch): for
    each, :func:`band_rhs` (q'' into acc (k, n), the multipliers in band order into lam (k, m), A's entries into
    vals (k, count)) and :func:`band_violations` (viol (k, 2)); returns the first state where the band solve
    declines (its rows not valid; the caller records it by the reference), or -1."""
    n, m = acc.shape[1], lam.shape[1]
    ddf, zero, phi = np.zeros(m), np.zeros(m), np.empty(m)
    for i in range(Y.shape[0]):
        out, ok = band_rhs(Y[i], ddf, pk, minv, f, tau, iperm, pairs, work)
        if not ok:
            return i
        acc[i] = out[n:]
        lam[i] = work[6]
        vals[i] = work[2]
        viol[i, 0], viol[i, 1] = band_violations(Y[i], zero, zero, pk, poff, work[2], work[3], work[4], phi)
    return -1
