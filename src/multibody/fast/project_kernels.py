"""Compiled projection onto the position constraints for the null-space formulation's step (paper 000 eqs 12-13;
issue 16 item 1): :func:`project_positions` is :func:`multibody.kinematics.solve_positions` (dense, no held
coordinates) with its pinned minimum-norm Gauss-Newton step :func:`multibody.linalg.rank.pinned_solve` (truncated
SVD, the same LAPACK routine; by the normal equations while A A^T is well conditioned, where both are the same
quantity), in one call instead of one Python evaluation of the constraints and one NumPy SVD per iteration. It reports failure instead of raising; the caller then runs the reference, which raises the
explanatory error. tests/test_fast_nullspace.py checks the agreement.
"""
from __future__ import annotations

import numpy as np
from numba import njit

from .kernels import assemble
from .step_kernels import MIN_NORM_PIVOT_RATIO, constraint_phi, gram_cholesky, normal_solve

#: the relative singular-value cut of linalg.rank.row_space_filter's default
ROW_SPACE_REL = 1e-13


@njit(cache=True)
def pinned_step(A, phi, pin, dq):
    """dq (n,) <- A_pin^+ phi (linalg.rank.pinned_solve: singular values <= pin s_max not inverted); returns
    (max |r_pinned|, max |phi - r_pinned|, s_max), r_pinned = U_k U_k^T phi. While A A^T is well conditioned
    (Cholesky pivot ratio >= MIN_NORM_PIVOT_RATIO, so every singular value is far above pin s_max) by the normal
    equations, dq = A^T (A A^T)^-1 phi and r_pinned = phi (the same quantities; round-off <~ eps / ratio), else by
    the SVD as the reference."""
    m, n = A.shape
    G = np.empty((m, m))
    if 0 < m <= n and gram_cholesky(A, n, MIN_NORM_PIVOT_RATIO, G):
        normal_solve(A, n, G, phi, False, dq)
        return np.max(np.abs(phi)), 0.0, 0.0
    return _pinned_svd(A, phi, pin, dq)


@njit(cache=True)
def _pinned_svd(A, phi, pin, dq):
    """:func:`pinned_step` by the truncated SVD (linalg.rank.pinned_solve)."""
    U, s, Wt = np.linalg.svd(A, full_matrices=False)
    k = 0
    if s.shape[0] and s[0] > 0.0:
        for i in range(s.shape[0]):
            if s[i] > pin * s[0]:
                k += 1
    c = np.zeros(k)
    for i in range(k):
        for r in range(A.shape[0]):
            c[i] += U[r, i] * phi[r]
    dq[:] = 0.0
    for i in range(k):
        ci = c[i] / s[i]
        for j in range(A.shape[1]):
            dq[j] += Wt[i, j] * ci
    pinned, rest = 0.0, 0.0
    for r in range(A.shape[0]):
        p = 0.0
        for i in range(k):
            p += U[r, i] * c[i]
        pinned, rest = max(pinned, abs(p)), max(rest, abs(phi[r] - p))
    return pinned, rest, (s[0] if s.shape[0] else 0.0)


@njit(cache=True)
def min_norm_multipliers(A, b, rtol, lam):
    """lam (m,) <- (A^T)^+ b with singular values <= rtol s_max dropped (linalg.rank.min_norm_solve): by the
    normal equations (A A^T)^-1 A b while A A^T is well conditioned (as :func:`pinned_step`), else the SVD."""
    m, n = A.shape
    G = np.empty((m, m))
    if 0 < m <= n and gram_cholesky(A, n, MIN_NORM_PIVOT_RATIO, G):
        normal_solve(A, n, G, b, True, lam)
        return
    _pinned_svd(np.ascontiguousarray(A.T), b, rtol, lam)


@njit(cache=True)
def project_positions(q, prim, pval, poff, mcols, mloc, mvec, shift, limit, drift, iterations, polish, pin, qe, ve, A,
                      gamma, phi):
    """In place: q (n,) onto Phi(q, t) = 0 as kinematics.solve_positions does (no held coordinates): at most
    ``iterations`` steps q -= A_pin^+ Phi until max |U_k U_k^T Phi| <= limit and max |Phi - U_k U_k^T Phi| <=
    max(limit, drift s_max) (drift = pin PINNED_DRIFT L), then ``polish`` more steps (kinematics.POLISH_STEPS,
    skipped once Phi is exactly zero). ``shift`` (m,) = f(t) of the prescribed motions. Returns False (q partly
    updated) if Phi is not finite or the iterations did not converge."""
    n = q.shape[0]
    qe[n] = 0.0
    ve[:] = 0.0
    An = np.empty((A.shape[0], n))
    dq = np.empty(n)
    for _ in range(iterations):
        qe[:n] = q
        constraint_phi(qe, ve, prim, pval, poff, mcols, mloc, mvec, shift, phi)
        if not np.all(np.isfinite(phi)):
            return False
        assemble(qe, ve, prim, pval, mcols, mloc, mvec, A, gamma)
        An[:, :] = A[:, :n]
        pinned, rest, smax = pinned_step(An, phi, pin, dq)
        if pinned <= limit and rest <= max(limit, drift * smax):
            return _polish(q, dq, polish, prim, pval, poff, mcols, mloc, mvec, shift, pin, qe, ve, A, gamma, phi, An)
        for j in range(n):
            q[j] -= dq[j]
    return False


@njit(cache=True)
def _polish(q, dq, polish, prim, pval, poff, mcols, mloc, mvec, shift, pin, qe, ve, A, gamma, phi, An):
    """kinematics._polish: ``polish`` steps q -= A_pin^+ Phi, the first with the step ``dq`` already computed at q
    (the reference recomputes the same SVD), stopping where Phi is exactly zero."""
    n = q.shape[0]
    for k in range(polish):
        if k:
            qe[:n] = q
            constraint_phi(qe, ve, prim, pval, poff, mcols, mloc, mvec, shift, phi)
            assemble(qe, ve, prim, pval, mcols, mloc, mvec, A, gamma)
            An[:, :] = A[:, :n]
            pinned_step(An, phi, pin, dq)
        if np.all(phi == 0.0):
            break
        for j in range(n):
            q[j] -= dq[j]
    return True
