"""Compiled (numba) kernels of the Lagrange right-hand side: assembly of A = Phi_q and gamma for the
builder primitives, and the acceleration solve. The readable reference is
:mod:`multibody.model.constraints` + :class:`multibody.assembly.Workspace` + :func:`multibody.linalg.gauss_solve`;
these kernels compute the same numbers (tests/test_fast.py) without Python or NumPy call overhead.

Packed model data (built by :mod:`multibody.fast.lagrange`):

- markers: ``mcols`` (K, 3) int body columns (x, y, theta) (column n = the always-zero ground column),
  ``mloc`` (K, 2) body-fixed vectors, ``mvec`` (K,) 1 for body-fixed directions (no translation);
- primitives: ``prim`` (P, 5) int rows ``[kind, row, a, b, c]`` and ``pval`` (P,) float, with kind
  0 Coincident (rows row, row+1; markers a, b), 1 Distance (markers a, b; pval = L),
  2 Angle (columns a = theta_a, b = theta_b), 3 LineProjection (markers c = e, a = p_i, b = p_j),
  4 CoordinateDriver (column a).

The Jacobian is accumulated into ``A`` (m, n + 1); entries of column n (ground) are never read.
"""
from __future__ import annotations

import numpy as np
from numba import njit

COINCIDENT, DISTANCE, ANGLE, LINE_PROJECTION, COORDINATE_DRIVER = 0, 1, 2, 3, 4


@njit(cache=True)
def _marker(k, mcols, mloc, mvec, qe, ve):
    """Marker k (paper 000 eq. 6 ingredients; markers.MarkerSet.evaluate): position p (2,), the theta
    column of its Jacobian b = B(theta) s', velocity p', convective acceleration -A s' theta'^2."""
    th, w = qe[mcols[k, 2]], ve[mcols[k, 2]]
    c, s = np.cos(th), np.sin(th)
    ux = c * mloc[k, 0] - s * mloc[k, 1]
    uy = s * mloc[k, 0] + c * mloc[k, 1]
    bx, by = -uy, ux
    vx, vy = bx * w, by * w
    cx, cy = -ux * w * w, -uy * w * w
    if mvec[k] == 0:
        ux += qe[mcols[k, 0]]
        uy += qe[mcols[k, 1]]
        vx += ve[mcols[k, 0]]
        vy += ve[mcols[k, 1]]
    return ux, uy, bx, by, vx, vy, cx, cy


@njit(cache=True)
def _add_row(A, r, k, mcols, mvec, dx, dy, bx, by):
    """A[r, cols of marker k] += (dx, dy)^T J_k, J_k = [[1, 0, bx], [0, 1, by]] (no identity part
    for a direction marker)."""
    if mvec[k] == 0:
        A[r, mcols[k, 0]] += dx
        A[r, mcols[k, 1]] += dy
    A[r, mcols[k, 2]] += dx * bx + dy * by


@njit(cache=True)
def assemble(qe, ve, prim, pval, mcols, mloc, mvec, A, gamma):
    """A (m, n + 1) = Phi_q and gamma (m,) of all primitive groups (paper 000 eq. 6;
    model.constraints, one branch per primitive). qe, ve (n + 1,) end with the zero ground entry.
    Prescribed motions (f'') are added by the caller."""
    A[:, :] = 0.0
    for p in range(prim.shape[0]):
        kind, r, a, b, c = prim[p, 0], prim[p, 1], prim[p, 2], prim[p, 3], prim[p, 4]
        if kind == ANGLE:
            A[r, a] -= 1.0
            A[r, b] += 1.0
            gamma[r] = 0.0
        elif kind == COORDINATE_DRIVER:
            A[r, a] += 1.0
            gamma[r] = 0.0
        else:
            pix, piy, bix, biy, vix, viy, cix, ciy = _marker(a, mcols, mloc, mvec, qe, ve)
            pjx, pjy, bjx, bjy, vjx, vjy, cjx, cjy = _marker(b, mcols, mloc, mvec, qe, ve)
            if kind == COINCIDENT:
                _add_row(A, r, a, mcols, mvec, 1.0, 0.0, bix, biy)
                _add_row(A, r, b, mcols, mvec, -1.0, 0.0, bjx, bjy)
                _add_row(A, r + 1, a, mcols, mvec, 0.0, 1.0, bix, biy)
                _add_row(A, r + 1, b, mcols, mvec, 0.0, -1.0, bjx, bjy)
                gamma[r] = -(cix - cjx)
                gamma[r + 1] = -(ciy - cjy)
            elif kind == DISTANCE:
                L = pval[p]
                dx, dy, ddx, ddy = pix - pjx, piy - pjy, vix - vjx, viy - vjy
                _add_row(A, r, a, mcols, mvec, dx / L, dy / L, bix, biy)
                _add_row(A, r, b, mcols, mvec, -dx / L, -dy / L, bjx, bjy)
                gamma[r] = -(ddx * ddx + ddy * ddy + dx * (cix - cjx) + dy * (ciy - cjy)) / L
            else:  # LINE_PROJECTION: e = marker c (direction on the body of p_i)
                ex, ey, bex, bey, vex, vey, cex, cey = _marker(c, mcols, mloc, mvec, qe, ve)
                dx, dy, ddx, ddy = pjx - pix, pjy - piy, vjx - vix, vjy - viy
                _add_row(A, r, c, mcols, mvec, dx, dy, bex, bey)
                _add_row(A, r, a, mcols, mvec, -ex, -ey, bix, biy)
                _add_row(A, r, b, mcols, mvec, ex, ey, bjx, bjy)
                gamma[r] = -(cex * dx + cey * dy + 2.0 * (vex * ddx + vey * ddy)
                             + ex * (cjx - cix) + ey * (cjy - ciy))


@njit(cache=True)
def cholesky(S, k):
    """In place lower Cholesky factor of S[:k, :k] (SPD); returns the smallest pivot ratio
    min_j L_jj^2 / max_j S_jj (<= 0 if S is not positive definite)."""
    smax = 0.0
    for j in range(k):
        smax = max(smax, S[j, j])
    ratio = np.inf
    for j in range(k):
        d = S[j, j]
        for i in range(j):
            d -= S[j, i] * S[j, i]
        if d <= 0.0 or smax <= 0.0:
            return -1.0
        ratio = min(ratio, d / smax)
        ljj = np.sqrt(d)
        S[j, j] = ljj
        for i in range(j + 1, k):
            x = S[i, j]
            for l in range(j):
                x -= S[i, l] * S[j, l]
            S[i, j] = x / ljj
    return ratio


@njit(cache=True)
def cholesky_solve(L, x, k):
    """x[:k] <- (L L^T)^-1 x[:k] with L the lower factor from :func:`cholesky`."""
    for i in range(k):
        s = x[i]
        for l in range(i):
            s -= L[i, l] * x[l]
        x[i] = s / L[i, i]
    for i in range(k - 1, -1, -1):
        s = x[i]
        for l in range(i + 1, k):
            s -= L[l, i] * x[l]
        x[i] = s / L[i, i]


@njit(cache=True)
def schur_solve(A, n, Minv, diag, f, gamma, tau, B, S, lam, acc):
    """acc (n,) from M acc + A^T lam = f, A acc = gamma by the Schur complement (range-space method;
    paper 000 eq. 3 eliminated): S = A M^-1 A^T (m, m), S lam = A M^-1 f - gamma, acc = M^-1 (f - A^T lam),
    with S by Cholesky. Exact (no penalty) and cheap; but its round-off grows like eps cond(S), the square
    of A's condition number, so it declines (returns False, nothing else valid) when the smallest
    Cholesky pivot ratio is below ``tau`` (see fast.lagrange.SCHUR_PIVOT_RATIO) or S is not positive
    definite (redundant rows). A is (m, n + 1) (column n unused); Minv (n, n) constant, diagonal if ``diag``;
    B (m, n), S (m, m), lam (m,) are workspaces."""
    m = A.shape[0]
    for i in range(m):
        for j in range(n):
            B[i, j] = 0.0
        for k in range(n):
            aik = A[i, k]
            if aik != 0.0:
                if diag:
                    B[i, k] = aik * Minv[k, k]
                else:
                    for j in range(n):
                        B[i, j] += aik * Minv[k, j]
        x = -gamma[i]
        for k in range(n):
            x += B[i, k] * f[k]
        lam[i] = x
        for j in range(i + 1):
            x = 0.0
            for k in range(n):
                x += B[i, k] * A[j, k]
            S[i, j] = x
    if m and cholesky(S, m) < tau:
        return False
    cholesky_solve(S, lam, m)
    g = acc  # reuse acc as g = f - A^T lam, then acc = M^-1 g
    for k in range(n):
        g[k] = f[k]
    for i in range(m):
        for k in range(n):
            g[k] -= A[i, k] * lam[i]
    if diag:
        for k in range(n):
            acc[k] = g[k] * Minv[k, k]
    else:
        gc = g.copy()
        for k in range(n):
            x = 0.0
            for j in range(n):
                x += Minv[k, j] * gc[j]
            acc[k] = x
    return True


@njit(cache=True)
def _congruence(Wt, M, f):
    """K = Wt M Wt^T (n, n) and Wt f (n,) by loops (Wt from the SVD has no fixed memory layout)."""
    n = M.shape[0]
    MW = np.zeros((n, n))
    for i in range(n):
        for k in range(n):
            mik = M[i, k]
            if mik != 0.0:
                for j in range(n):
                    MW[i, j] += mik * Wt[j, k]
    K, rhs = np.zeros((n, n)), np.zeros(n)
    for i in range(n):
        for k in range(n):
            w = Wt[i, k]
            rhs[i] += w * f[k]
            for j in range(n):
                K[i, j] += w * MW[k, j]
    return K, rhs


@njit(cache=True)
def gauss_kernel(A, n, M, f, gamma, rel, power, acc):
    """linalg.gauss_solve compiled (same algorithm and formulas, see its docstring: Gauss's principle
    with a penalty of relative width ``rel`` in the singular-value basis of A; paper 002 eq. 6).
    Smooth through singular configurations, unique with redundant rows. Returns False if the
    scaled matrix is not positive definite (the caller then raises through the reference path)."""
    m = A.shape[0]
    if m > 0:
        U, s, Wt = np.linalg.svd(np.ascontiguousarray(A[:, :n]))
    else:
        U, s, Wt = np.zeros((0, 0)), np.zeros(0), np.eye(n)
    if m == 0 or s[0] == 0.0:
        K = M.copy()
        rhs = f.copy()
        if cholesky(K, n) <= 0.0:
            return False
        cholesky_solve(K, rhs, n)
        acc[:] = rhs
        return True
    k, mu = s.shape[0], rel * s[0]
    K, rhs = _congruence(Wt, M, f)
    for i in range(k):
        p = (s[i] / mu) ** (2 * power)
        K[i, i] += p
        if s[i] > 0.0:
            x = 0.0
            for r in range(m):
                x += U[r, i] * gamma[r]
            rhs[i] += p / s[i] * x
    d = np.empty(n)
    for i in range(n):
        d[i] = 1.0 / np.sqrt(K[i, i])
    for i in range(n):
        rhs[i] *= d[i]
        for j in range(n):
            K[i, j] *= d[i] * d[j]
    if cholesky(K, n) <= 0.0:
        return False
    cholesky_solve(K, rhs, n)
    for i in range(n):
        rhs[i] *= d[i]
    for j in range(n):
        x = 0.0
        for i in range(n):
            x += Wt[i, j] * rhs[i]
        acc[j] = x
    return True


@njit(cache=True)
def lagrange_rhs(y, ddf, prim, pval, mcols, mloc, mvec, M, Minv, diag, f, rel, power, tau, qe, ve, A, gamma, B, S,
                 lam):
    """y' = [v, q''] (2n,) of the Lagrange formulation at y = [q, v] (formulations.lagrange): assemble
    A, gamma (+ ddf (m,), the drivers' f''), then q'' by :func:`schur_solve` if it accepts (tau > 0),
    else by :func:`gauss_kernel`. Returns (y', path) with path 0 = Schur, 1 = SVD, -1 = failed."""
    n = M.shape[0]
    for i in range(n):
        qe[i] = y[i]
        ve[i] = y[n + i]
    assemble(qe, ve, prim, pval, mcols, mloc, mvec, A, gamma)
    for i in range(gamma.shape[0]):
        gamma[i] += ddf[i]
    out = np.empty(2 * n)
    out[:n] = y[n: 2 * n]
    acc = out[n:]
    if tau > 0.0 and schur_solve(A, n, Minv, diag, f, gamma, tau, B, S, lam, acc):
        return out, 0
    if gauss_kernel(A, n, M, f, gamma, rel, power, acc):
        return out, 1
    return out, -1
