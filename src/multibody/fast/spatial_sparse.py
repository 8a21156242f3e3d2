"""The constraint rows of a spatial director model in compressed sparse row form (issue 16: lagrange + dopri5 on
the six-body linkage <= 0.5 ms per step): the right-hand side, the error filter and the projection of the Lagrange
formulation on X = Phi_q[rows] with only its structural non-zeros (six-body linkage: 385 of 59 x 60; a row of a
director model's A has at most 24), instead of dense (r, n) arrays.

:class:`RowPattern` is computed once per row set from the packed table (:class:`.spatial.QuadraticTable`, which
entries feed which row and column: the structure, not the values, which vanish by chance at aligned configurations)
and kept on the table (:func:`row_pattern`): the rows in reverse Cuthill-McKee order (spatial_step_kernels.rcm_rows),
the CSR pattern of X, where each table entry lands in it, the same non-zeros by column (CSC) for X diag(w) X^T, and
the first column of each row of X X^T's envelope (George & Liu, Computer Solution of Large Sparse Positive Definite
Systems, Sect. 4.2), which contains its Cholesky factor.

The kernels do the operations of dense ones on the non-zeros, in the same order (the entries of the table in
turn; rows ascending within a column; the envelope Cholesky with the structural envelope, which contains the
value-based one and adds only exact zeros), so the right-hand side is the dense
:func:`.spatial_step_kernels.schur_rhs`'s to the last bit. The references that define the numbers are
Lagrange's NumPy ones (paper 003 eqs 4-9; kinematics.solve_positions / solve_velocities; Lagrange._tangent_error,
see :mod:`.spatial_step_kernels`); tests/test_fast_spatial_sparse.py and tests/test_fast_spatial_step.py check the
agreement.
"""
from __future__ import annotations

import numpy as np
from numba import njit

from .spatial_kernels import lagrange_rhs
from .spatial_step_kernels import envelope_factor, envelope_solve_in, rcm_rows
from .step_kernels import worst_violation


class RowPattern:
    """The structure of X = Phi_q[rows] for the rows ``rows`` (in the solves' order, reverse Cuthill-McKee) of a
    packed table; ``pat``, the kernels' tuple: (rows, rowmap (m,: row's place in rows or -1), gpos, hpos (each table
    entry's place among X's non-zeros or -1), rowptr, col (CSR), colptr, crow, cpos (CSC: row and CSR place),
    first (r,: first column of each row of X X^T's envelope))."""

    def __init__(self, table, rows):
        hk, hi, _, _, gk, gi, _, _ = table.tab
        m, n = table.m, table.n
        rows = rcm_rows(table, rows)
        r = len(rows)
        rowmap = np.full(m, -1, dtype=np.int64)
        rowmap[rows] = np.arange(r)
        a, j = np.r_[rowmap[gk], rowmap[hk]], np.r_[gi, hi]
        keys = np.unique(a[a >= 0] * n + j[a >= 0])            # sorted by row, then column: CSR order
        where = np.where(a >= 0, np.searchsorted(keys, a * n + j), -1)
        gpos, hpos = where[:len(gk)], where[len(gk):]
        rowptr = np.searchsorted(keys // n, np.arange(r + 1))
        col = keys % n
        by_col = np.lexsort((keys // n, col))                   # column, then row ascending
        colptr = np.searchsorted(col[by_col], np.arange(n + 1))
        crow, cpos = keys[by_col] // n, by_col
        top = np.full(n, r, dtype=np.int64)                     # the first row of each column
        np.minimum.at(top, col, keys // n)
        first = np.array([top[col[rowptr[i]: rowptr[i + 1]]].min() if rowptr[i + 1] > rowptr[i] else i
                          for i in range(r)], dtype=np.int64)
        first = np.minimum(first, np.arange(r))
        ints = lambda x: np.ascontiguousarray(x, dtype=np.int64)      # noqa: E731
        self.rows, self.nnz = rows, len(keys)
        self.pat = tuple(ints(x) for x in (rows, rowmap, gpos, hpos, rowptr, col, colptr, crow, cpos, first))


def row_pattern(table, rows) -> RowPattern:
    """The :class:`RowPattern` of these rows (any order) of ``table``, computed once per row set and kept on the
    table (the rows are chosen anew along a run, Lagrange._choose_rows, and come back)."""
    cache = table.__dict__.setdefault("_patterns", {})
    key = np.sort(np.asarray(rows, dtype=np.int64)).tobytes()
    if key not in cache:
        cache[key] = RowPattern(table, rows)
    return cache[key]


@njit(cache=True)
def eval_rows(q, pat, tab, xv):
    """xv (nnz,) <- the non-zeros of X = Phi_q(q)[rows] (spatial_kernels.quad_eval's G, entry by entry in the
    same order)."""
    gpos, hpos = pat[2], pat[3]
    hj, hv, gv = tab[2], tab[3], tab[6]
    xv[:] = 0.0
    for e in range(gpos.shape[0]):
        if gpos[e] >= 0:
            xv[gpos[e]] += gv[e]
    for e in range(hpos.shape[0]):
        if hpos[e] >= 0:
            xv[hpos[e]] += hv[e] * q[hj[e]]


@njit(cache=True)
def eval_phi(q, tab, phi):
    """phi (m,) <- Phi(q), all rows (spatial_kernels.quad_eval's phi)."""
    hk, hi, hj, hv, gk, gi, gv, c = tab
    phi[:] = c
    for e in range(gk.shape[0]):
        phi[gk[e]] += gv[e] * q[gi[e]]
    for e in range(hk.shape[0]):
        phi[hk[e]] += 0.5 * q[hi[e]] * (hv[e] * q[hj[e]])


@njit(cache=True)
def gram(xv, pat, w, S):
    """S (r, r), lower triangle within the envelope <- X diag(w) X^T, column by column (spatial_step_kernels.
    sparse_gram's order)."""
    colptr, crow, cpos, first = pat[6], pat[7], pat[8], pat[9]
    for a in range(first.shape[0]):
        for b in range(first[a], a + 1):
            S[a, b] = 0.0
    for j in range(colptr.shape[0] - 1):
        for p in range(colptr[j], colptr[j + 1]):
            a, xa = crow[p], xv[cpos[p]] * w[j]
            for s in range(colptr[j], p + 1):
                S[a, crow[s]] += xa * xv[cpos[s]]


@njit(cache=True)
def _times(xv, pat, x, out):
    """out (r,) <- X x."""
    rowptr, col = pat[4], pat[5]
    for a in range(rowptr.shape[0] - 1):
        s = 0.0
        for p in range(rowptr[a], rowptr[a + 1]):
            s += xv[p] * x[col[p]]
        out[a] = s


@njit(cache=True)
def _normal_solve(xv, pat, L, b, x):
    """x (n,) <- X^T (X X^T)^-1 b = X^+ b (b (r,) overwritten), L the factor of X X^T (step_kernels.normal_solve)."""
    rowptr, col, first = pat[4], pat[5], pat[9]
    envelope_solve_in(L, b, rowptr.shape[0] - 1, first)
    x[:] = 0.0
    for a in range(rowptr.shape[0] - 1):
        for p in range(rowptr[a], rowptr[a + 1]):
            x[col[p]] += xv[p] * b[a]


@njit(cache=True)
def factor(xv, pat, L):
    """L <- lower Cholesky factor of X X^T; its smallest pivot ratio (1 without rows, <= 0 if not definite)."""
    r = pat[0].shape[0]
    if r == 0:
        return 1.0
    gram(xv, pat, np.ones(pat[6].shape[0] - 1), L)
    return envelope_factor(L, r, pat[9])


@njit(cache=True)
def sparse_rhs(y, pat, tab, minv, f, tau, xv, ga, S, lam, out):
    """spatial_step_kernels.schur_rhs on X's non-zeros (diagonal M, minv = 1 / diag M): out <- [v, q''] of
    S lam = X M^-1 f - gamma, q'' = M^-1 (f - X^T lam), S = X M^-1 X^T (paper 003 eqs 4-9); False if the smallest
    pivot ratio of S is below tau. Leaves xv, S its factor, lam (r,)."""
    rows, rowmap, hpos, rowptr, col, first = pat[0], pat[1], pat[3], pat[4], pat[5], pat[9]
    hk, hi, hj, hv = tab[0], tab[1], tab[2], tab[3]
    n, r = f.shape[0], rows.shape[0]
    q, v = y[:n], y[n:]
    eval_rows(q, pat, tab, xv)
    ga[:r] = 0.0
    for e in range(hpos.shape[0]):          # gamma = -v^T H_k v of the rows (spatial_kernels.quad_gamma)
        if hpos[e] >= 0:
            ga[rowmap[hk[e]]] -= hv[e] * v[hi[e]] * v[hj[e]]
    for a in range(r):
        s = -ga[a]
        for p in range(rowptr[a], rowptr[a + 1]):
            s += xv[p] * minv[col[p]] * f[col[p]]
        lam[a] = s
    if r:
        gram(xv, pat, minv, S)
        if envelope_factor(S, r, first) < tau:
            return False
        envelope_solve_in(S, lam, r, first)
    g = f.copy()
    for a in range(r):
        for p in range(rowptr[a], rowptr[a + 1]):
            g[col[p]] -= xv[p] * lam[a]
    for j in range(n):
        out[j] = v[j]
        out[n + j] = g[j] * minv[j]
    return True


@njit(cache=True)
def sparse_tangent_error(y, err, weight, pat, tab, tau, xv, L, ax, dx, out):
    """spatial_step_kernels' error filter on X's non-zeros: out <- err with the parts of its position and velocity
    errors in the row space of A(q) scaled by ``weight`` (projector applied twice); False if X X^T is
    ill-conditioned (pivot ratio < tau)."""
    n = dx.shape[0]
    out[:] = err
    eval_rows(y[:n], pat, tab, xv)
    if factor(xv, pat, L) < tau:
        return False
    tangent, normal = np.empty(n), np.empty(n)
    for part in range(2):
        tangent[:] = err[part * n: (part + 1) * n]
        normal[:] = 0.0
        for _ in range(2):      # twice: the second pass removes the round-off the first left
            _times(xv, pat, tangent, ax)
            _normal_solve(xv, pat, L, ax, dx)
            tangent -= dx
            normal += dx
        for j in range(n):
            out[part * n + j] = tangent[j] + weight * normal[j]
    return True


@njit(cache=True)
def _gauss_newton(q, pat, phi, xv, tau, L, r, dx, refactor):
    """q -= X^T (L L^T)^-1 phi[rows] (the minimum-norm step X^+ phi[rows], L refactored from X first when
    ``refactor``); False if X X^T is ill-conditioned."""
    if refactor and factor(xv, pat, L) < tau:
        return False
    rows = pat[0]
    for a in range(rows.shape[0]):
        r[a] = phi[rows[a]]
    _normal_solve(xv, pat, L, r, dx)
    q -= dx
    return True


@njit(cache=True)
def sparse_project(q, v, pat, tab, limit, iterations, polish, tau, phi, xv, L, r, dx):
    """spatial_step_kernels' projection on X's non-zeros, in place: q onto Phi = 0 (at most ``iterations``
    Gauss-Newton steps until max |Phi| <= limit over all rows, then ``polish`` more, as kinematics.solve_positions /
    _polish), then v += X^+ (-X v) with X at the projected q. The polish steps keep the factor of X X^T of the last
    Newton step (refactored only if there was none): they act on a residual below ``limit`` with X within a Newton
    step of that factor's, so the step's error is that relative change times a residual already at ``limit``
    (the six-body linkage: ~1e-10 times 1e-12 L), below round-off. Returns the smallest Cholesky pivot ratio of
    X X^T at the projected q, or -1 (q, v partly updated) if not converged or X X^T was ill-conditioned (ratio <
    tau): the caller runs the reference."""
    converged, factored = False, False
    for _ in range(iterations):
        eval_phi(q, tab, phi)
        worst = worst_violation(phi)
        if not np.isfinite(worst):
            return -1.0
        if worst <= limit:
            converged = True
            break
        eval_rows(q, pat, tab, xv)
        if not _gauss_newton(q, pat, phi, xv, tau, L, r, dx, True):
            return -1.0
        factored = True
    if not converged:
        return -1.0
    for k in range(polish):
        if k:
            eval_phi(q, tab, phi)
        if worst_violation(phi) == 0.0:
            break
        eval_rows(q, pat, tab, xv)
        if not _gauss_newton(q, pat, phi, xv, tau, L, r, dx, not factored):
            return -1.0
        factored = True
    eval_rows(q, pat, tab, xv)
    ratio = factor(xv, pat, L)
    if ratio < tau:
        return -1.0
    _times(xv, pat, v, r)
    r[:pat[0].shape[0]] *= -1.0
    _normal_solve(xv, pat, L, r, dx)
    v += dx
    return ratio


@njit(cache=True)
def lagrange_rhs_at(y, pat, tab, mass, work, out):
    """out <- y' = [v, q''] of the Lagrange formulation on the rows of ``pat`` (:class:`RowPattern`):
    :func:`sparse_rhs` for a diagonal M, else spatial_kernels.lagrange_rhs (dense). mass (minv (n,), Minv (n, n),
    diag, f, tau); work (xv, phi, G, gamma, A (r, n + 1), ga, B, S, lam). False if the Schur solve declined or y'
    is not finite (the caller takes the reference solve)."""
    minv, Minv, diag, f, tau = mass
    xv, phi, G, gamma, A, ga, B, S, lam = work
    if diag:
        ok = sparse_rhs(y, pat, tab, minv, f, tau, xv, ga, S, lam, out)
    else:
        ok = lagrange_rhs(y, pat[0], *tab, Minv, diag, f, tau, phi, G, gamma, A, ga, B, S, lam, out)
    return ok and np.all(np.isfinite(out))
