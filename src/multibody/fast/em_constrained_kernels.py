"""The Newton iteration of the constrained energy-momentum step (paper 004 eq. 10) on the packed constraint table of
:mod:`.spatial_kernels`, one compiled call per step (issue 16: the six-body linkage's step within 1 ms, robustly).

    R_q = 2/dt M dq - 2 M v_n + dt grad V + dt G(q_n + dq/2)^T lam = 0,   R_l = Phi(q_n + dq) = 0

in the unknowns (dq = q_{n+1} - q_n, lam), with the exact Jacobian [[2/dt M + dt/2 sum lam_k H_k, dt G_mid^T],
[G_{n+1}, 0]] (all constraints quadratic). Two things keep the cost of a step down without changing its result
beyond round-off (the root is unique near the start and Newton ends with a correction at the round-off floor, so
any start from which it converges gives the same step):

- the start: of dq = dt v_n, lam = lam_n (the step's first-order guess) and the extrapolation dq = 2 dt v_n - dq_{n-1}
  = dt (2 v_n - v_{n-1/2}), lam = 2 lam_n - lam_{n-1} (second order in dt: the increment of a smooth motion), the
  one with the smaller scaled residual (the six-body linkage at dt = 1e-3: 3 -> 2 iterations per step);
- the factorisation: the closing correction uses the LU factors of the last iteration matrix (LAPACK getrf, the
  factorisation numpy.linalg.solve makes) instead of factorising it again.

The readable reference is ``EnergyMomentumStepper._constrained_step`` (the same start and the same tests);
tests/test_fast_spatial.py checks the agreement.
"""
from __future__ import annotations

import llvmlite.binding as ll
import numpy as np
from numba import njit, types
from numba.extending import get_cython_function_address
from numba.np.linalg import _LAPACK

from .lapack import WORK
from .spatial_kernels import quad_eval, quad_hessian

#: LAPACK dgetrf as numba's own np.linalg calls it (its helper library's entry to scipy's LAPACK)
_getrf = _LAPACK().numba_xxgetrf(types.float64)
# LAPACK dgeqp3 of scipy.linalg.cython_lapack (the routine fast.spatial.row_pivots calls through
# scipy.linalg.lapack), bound by name so that cached kernels find it in every process
ll.add_symbol("multibody_dgeqp3", get_cython_function_address("scipy.linalg.cython_lapack", "dgeqp3"))
_INT, _DBL = types.CPointer(types.int32), types.CPointer(types.float64)
_geqp3 = types.ExternalFunction("multibody_dgeqp3", types.void(_INT, _INT, _DBL, _INT, _INT, _DBL, _DBL, _INT, _INT))
#: workspace of :func:`row_choice` (doubles): fast.lapack.WORK, the lwork row_pivots passes, so the same blocking
#: and the same numbers
QR_WORK = WORK


@njit(cache=True)
def lu_factor(F, ipiv):
    """LU factors with partial pivoting (LAPACK getrf) in place of the square matrix J stored transposed in the
    C-ordered F (F[j, i] = J[i, j], i.e. J in Fortran order); ipiv (int32) <- getrf's 1-based row interchanges.
    Raises numpy.linalg.LinAlgError, as numpy.linalg.solve does, for a non-finite or exactly singular J."""
    n = F.shape[0]
    if not np.isfinite(np.sum(F)):
        raise np.linalg.LinAlgError("Array must not contain infs or NaNs.")
    if _getrf(ord("d"), n, n, F.ctypes, n, ipiv.ctypes) > 0:
        raise np.linalg.LinAlgError("Matrix is singular to machine precision.")


@njit(cache=True)
def lu_solve(F, ipiv, b, x):
    """x <- J^-1 b from the factors of :func:`lu_factor`: the interchanges, then the unit lower and the upper
    triangle by columns (LAPACK getrs with one right-hand side, its reference trsv loops)."""
    n = b.shape[0]
    x[:] = b
    for i in range(n):
        p = ipiv[i] - 1
        if p != i:
            x[i], x[p] = x[p], x[i]
    for j in range(n):
        xj = x[j]
        if xj != 0.0:
            for i in range(j + 1, n):
                x[i] -= F[j, i] * xj
    for j in range(n - 1, -1, -1):
        x[j] /= F[j, j]
        xj = x[j]
        if xj != 0.0:
            for i in range(j):
                x[i] -= F[j, i] * xj


@njit(cache=True)
def row_choice(A, F, jpvt, tau, work, rtol, chosen):
    """chosen[:rank] <- the rows fast.spatial.independent_rows(A) finds (sorted), and rank: LAPACK dgeqp3 on A^T
    (A (m, n) C-ordered is A^T in Fortran order; copied to F) with the workspace of row_pivots, so the same pivots,
    then the rank decision of linalg.rank._rank_from_diag (|R_ii| > rtol |R_11|, |R_11| > 1e-300); -1 if LAPACK
    reports an error (row_pivots then takes scipy.linalg.qr)."""
    m, n = A.shape
    F[:, :] = A
    dims = np.empty(5, dtype=np.int32)      # M, N, LDA, LWORK, INFO of the Fortran call
    dims[0], dims[1], dims[2], dims[3] = n, m, n, work.shape[0]
    jpvt[:] = 0
    _geqp3(dims[0:].ctypes, dims[1:].ctypes, F.ctypes, dims[2:].ctypes, jpvt.ctypes, tau.ctypes, work.ctypes,
           dims[3:].ctypes, dims[4:].ctypes)
    if dims[4] != 0:
        return -1
    top = abs(F[0, 0]) if min(m, n) > 0 else 0.0
    rank = 0
    if top > 1e-300:
        for i in range(min(m, n)):
            if abs(F[i, i]) > rtol * top:
                rank += 1
    chosen[:rank] = np.sort(jpvt[:rank] - 1)
    return rank


@njit(cache=True)
def _residual(qn, vn, dq, lam, rows, M, Mv2, force, dt, tab, phi, G, Gm, res):
    """R = [2/dt M dq - 2 M v_n + dt grad V + dt G(q_mid)^T lam ; Phi(q_n + dq)] (paper 004 eq. 10 with
    v_{n+1/2} eliminated); leaves Gm = G(q_mid)[rows] and G = G(q_{n+1}) (all rows)."""
    n, r = qn.shape[0], rows.shape[0]
    hk, hi, hj, hv, gk, gi, gv, c = tab
    quad_eval(qn + 0.5 * dq, hk, hi, hj, hv, gk, gi, gv, c, phi, G)
    for a in range(r):
        Gm[a, :] = G[rows[a], :]
    quad_eval(qn + dq, hk, hi, hj, hv, gk, gi, gv, c, phi, G)
    Mdq = M @ dq
    for i in range(n):
        s = 2.0 / dt * Mdq[i] - Mv2[i] + force[i]
        for a in range(r):
            s += dt * Gm[a, i] * lam[a]
        res[i] = s
    for a in range(r):
        res[n + a] = phi[rows[a]]


@njit(cache=True)
def _max_abs(x, start, stop):
    out = 0.0
    for i in range(start, stop):
        out = max(out, abs(x[i]))
    return out


@njit(cache=True)
def scaled_residual(res, n, scale, size):
    """max(max |dynamic rows| / scale, max |constraint rows| / size): the measure of the convergence test, by
    which the start is chosen."""
    return max(_max_abs(res, 0, n) / scale, _max_abs(res, n, res.shape[0]) / size)


@njit(cache=True)
def _jacobian(M, Hs, G, Gm, rows, dt, F):
    """F <- the iteration matrix J transposed (F[j, i] = J[i, j]): J = [[2/dt M + dt/2 Hs, dt Gm^T], [G[rows], 0]]."""
    n, r = M.shape[0], rows.shape[0]
    F[:, :] = 0.0
    for i in range(n):
        for j in range(n):
            F[j, i] = 2.0 / dt * M[i, j] + 0.5 * dt * Hs[i, j]
        for a in range(r):
            F[n + a, i] = dt * Gm[a, i]
            F[i, n + a] = G[rows[a], i]


@njit(cache=True)
def constrained_newton(qn, vn, M, force, dt, rows, lam, dq_prev, lam_prev, extrapolate, tab, m, tol, length, max_it,
                       want_cond, dq, out):
    """Newton on paper 004 eq. (10) for (dq = q_{n+1} - q_n, lam) as ``EnergyMomentumStepper._constrained_step``:
    from dq = dt v_n and lam (updated in place), or, where ``extrapolate`` (dq_prev = q_n - q_{n-1} and lam_prev =
    lam_{n-1} of the last step) and its scaled residual is smaller, from dq = 2 dt v_n - dq_prev, lam = 2 lam -
    lam_prev; converged when max |dynamic rows| <= tol scale (scale = max(|2 M v_n|, |force|), force = dt grad V)
    and max |Phi| <= tol size (size = max(1, length, |q_n|)), then one more correction with the last factors.
    out <- (iterations or -1, condition number of the last iteration matrix or NaN, 1 if the extrapolated start
    was taken else 0)."""
    n, r = qn.shape[0], rows.shape[0]
    hk, hi, hj, hv = tab[0], tab[1], tab[2], tab[3]
    phi, G, Gm = np.empty(m), np.empty((m, n)), np.empty((r, n))
    res, full, Hs, dx = np.empty(n + r), np.zeros(m), np.empty((n, n)), np.empty(n + r)
    F, ipiv = np.empty((n + r, n + r)), np.empty(n + r, dtype=np.int32)
    Mv2 = 2.0 * (M @ vn)
    scale = max(max(np.max(np.abs(Mv2)), np.max(np.abs(force))), np.finfo(np.float64).tiny)
    size = max(max(1.0, length), np.max(np.abs(qn)))
    for i in range(n):
        dq[i] = dt * vn[i]
    out[0], out[1], out[2] = -1.0, np.nan, 0.0
    if extrapolate:
        _residual(qn, vn, dq, lam, rows, M, Mv2, force, dt, tab, phi, G, Gm, res)
        plain = scaled_residual(res, n, scale, size)
        dq2, lam2 = 2.0 * dt * vn - dq_prev, 2.0 * lam - lam_prev
        _residual(qn, vn, dq2, lam2, rows, M, Mv2, force, dt, tab, phi, G, Gm, res)
        if scaled_residual(res, n, scale, size) < plain:
            dq[:], lam[:], out[2] = dq2, lam2, 1.0
    for it in range(max_it + 1):
        if it > 0 or out[2] == 0.0:
            _residual(qn, vn, dq, lam, rows, M, Mv2, force, dt, tab, phi, G, Gm, res)
        if _max_abs(res, 0, n) <= tol * scale and _max_abs(res, n, n + r) <= tol * size:
            if it > 0:
                lu_solve(F, ipiv, res, dx)
                dq -= dx[:n]
                lam -= dx[n:]
            out[0] = it
            return
        if it == max_it:
            return
        for a in range(r):
            full[rows[a]] = lam[a]
        quad_hessian(full, hk, hi, hj, hv, Hs)
        _jacobian(M, Hs, G, Gm, rows, dt, F)
        if want_cond:
            out[1] = np.linalg.cond(F.T)
        lu_factor(F, ipiv)
        lu_solve(F, ipiv, res, dx)
        dq -= dx[:n]
        lam -= dx[n:]
