"""Consecutive energy-momentum steps in one compiled call (issue 16: the whole gyro-top run, not only its step,
within 0.1 ms per step): the loops of :class:`multibody.fast.em_batch.StepBatch`. Each step is the compiled
Newton of :mod:`.em_constrained_kernels` (constrained, paper 004 eq. 10) or :mod:`.em_reduced_kernels` (reduced,
Sects 4.3-4.5) called exactly as ``EnergyMomentumStepper.step`` calls it, with the same arrays and the same
update q_{n+1} = q_n + dq, v_{n+1} = 2/dt dq - v_n; a loop stops (and leaves the step to the Python stepper,
with all its fall-backs) at the first step where the Python stepper would have done anything else:

- constrained: where the pivoted QR of A(q_n) (``_select``) might not keep every row (:func:`rows_all_independent`)
  or, with redundant rows, chooses other rows than the last step's (:func:`same_rows`: the same LAPACK call; the
  stepper then carries the multipliers over), or Newton does not converge (the stepper then retries from the plain
  start, then raises);
- reduced: where Newton from 2 mu_n - mu_{n-1} (the first step: from the predictor) does not converge or its root
  fails the mid-point frame test |det| >= 1/2 of ``ReducedNewton._consistent`` (the stepper then tries its other
  starts).

``done[0]`` counts the finished steps; the outputs are written step by step, so they stay valid when a kernel
raises (a singular Newton matrix: numpy.linalg.LinAlgError) and the caller takes that step in Python.
"""
from __future__ import annotations

import numpy as np
from numba import njit

from .em_reduced_kernels import reduced_newton
from .em_constrained_kernels import QR_WORK, constrained_newton, row_choice
from .spatial_kernels import quad_eval
from .spatial_step_kernels import gram_factor

#: rows_all_independent certifies sigma_min(A) / sigma_max(A) above this many times the rank tolerance sqrt(eps)
#: of linalg.rank (the margin covers the rounding of the bound itself, ~eps cond(A A^T) relative: 1 % at the limit)
RANK_MARGIN = 10.0


@njit(cache=True)
def rows_all_independent(q, tab, phi, A, L, w):
    """True if the pivoted QR of A = Phi_q(q) (linalg.rank.pivoted_qr: rank = #{|R_ii| > sqrt(eps) |R_11|}) keeps
    every row. Its diagonal satisfies |R_ii| >= sigma_min(A) (R triangular: sigma_min(R) <= min |R_ii|) and |R_11| <=
    sigma_max(A) <= |A|_F; and sigma_min(A)^2 = lambda_min(A A^T) >= 1 / |L^-1|_F^2 for A A^T = L L^T (|G^-1|_2 <=
    |L^-1|_F^2). So 1 / (|L^-1|_F^2 |A|_F^2) > (RANK_MARGIN sqrt(eps))^2 proves full rank in the QR's own rank
    decision. False (no claim) also where the Cholesky factor (spatial_step_kernels.gram_factor) does not exist."""
    hk, hi, hj, hv, gk, gi, gv, c = tab
    m = A.shape[0]
    quad_eval(q, hk, hi, hj, hv, gk, gi, gv, c, phi, A)
    if not gram_factor(A, L) > 0.0:
        return False
    fro = np.sum(A * A)
    inv = 0.0
    for col in range(m):                       # |L^-1|_F^2 column by column (forward substitution of e_col)
        for a in range(col, m):
            t = 1.0 if a == col else 0.0
            for b in range(col, a):
                t -= L[a, b] * w[b]
            w[a] = t / L[a, a]
            inv += w[a] * w[a]
    return 1.0 / (inv * fro) > RANK_MARGIN * RANK_MARGIN * np.finfo(np.float64).eps


@njit(cache=True)
def same_rows(q, tab, phi, A, F, jpvt, tau, work, chosen, rows):
    """True if the rows EnergyMomentumStepper._select chooses at q (fast.spatial.independent_rows of A = Phi_q(q):
    em_constrained_kernels.row_choice, the same LAPACK call) are ``rows``."""
    hk, hi, hj, hv, gk, gi, gv, c = tab
    quad_eval(q, hk, hi, hj, hv, gk, gi, gv, c, phi, A)
    if row_choice(A, F, jpvt, tau, work, np.sqrt(np.finfo(np.float64).eps), chosen) != rows.shape[0]:
        return False
    for a in range(rows.shape[0]):
        if chosen[a] != rows[a]:
            return False
    return True


@njit(cache=True)
def constrained_run(q0, v0, M, force, dt, rows, lam0, dq_prev, lam_prev, extrapolate, tab, m, tol, length, max_it,
                    want_cond, Y, DQ, LAM, IT, COND, done):
    """Up to Y.shape[0] constrained steps from (q0, v0) with the multipliers lam0 (of ``rows``) of the last step and,
    where ``extrapolate``, the last step's increment dq_prev and the multipliers lam_prev before it
    (em_constrained_kernels.constrained_newton's start): Y (k, 2n), DQ (k, n), LAM (k, r), IT, COND (k,) <- each
    step's state [q, v], increment, multipliers, Newton iterations and condition number. Each step first checks the
    stepper's choice of rows at q_n: every row kept (rows = 0..m-1: :func:`rows_all_independent`), else the same
    ``rows`` as the pivoted QR finds (:func:`same_rows`)."""
    n, r = q0.shape[0], rows.shape[0]
    q, v, lam, last, before = q0.copy(), v0.copy(), lam0.copy(), dq_prev.copy(), lam_prev.copy()
    phi, A, L, w = np.empty(m), np.empty((m, n)), np.empty((m, m)), np.empty(m)
    F, jpvt, tau, work, chosen = np.empty((m, n)), np.empty(m, np.int32), np.empty(min(m, n)), np.empty(QR_WORK), \
        np.empty(m, np.int64)
    dq, out = np.empty(n), np.empty(3)
    done[0] = 0
    for k in range(Y.shape[0]):
        if not (rows_all_independent(q, tab, phi, A, L, w) if r == m
                else same_rows(q, tab, phi, A, F, jpvt, tau, work, chosen, rows)):
            return
        trial = lam.copy()
        constrained_newton(q, v, M, force, dt, rows, trial, last, before, extrapolate, tab, m, tol, length, max_it,
                           want_cond, dq, out)
        if out[0] < 0:
            return
        for i in range(n):
            q[i] = q[i] + dq[i]
            v[i] = 2.0 / dt * dq[i] - v[i]
        before, lam, extrapolate = lam, trial, True
        last[:] = dq
        Y[k, :n], Y[k, n:], DQ[k], LAM[k], IT[k], COND[k] = q, v, dq, lam, out[0], out[1]
        done[0] = k + 1


@njit(cache=True)
def reduced_run(q0, v0, M, force, mm, dt, tr, cl, dep, free, cscale, mu_last, mu_prev, first, tol, length, max_it,
                h, want_cond, Y, DQ, MU, IT, COND, done):
    """Up to Y.shape[0] reduced steps from (q0, v0), each Newton from 2 mu_n - mu_{n-1} (mu_last, mu_prev: the
    last two steps' roots; ``first``: the run's first step, from mu_last = mu_prev = the predictor, after which
    the stepper extrapolates from its root alone, 2 mu_1 - mu_1): Y (k, 2n), DQ (k, n), MU (k, d), IT, COND (k,) <-
    each step's state [q, v], increment, root, iterations and condition number (reduced_newton's out)."""
    n = q0.shape[0]
    q, v = q0.copy(), v0.copy()
    last, prev = mu_last.copy(), mu_prev.copy()
    dq, out = np.empty(n), np.empty(3)
    done[0] = 0
    for k in range(Y.shape[0]):
        mu = (2 * last - prev).astype(np.complex128)
        reduced_newton(q.astype(np.complex128), v, M, force, mm, dt, tr, cl, dep, free, cscale, mu, tol, length,
                       max_it, h, want_cond, dq, out)
        if out[0] < 0 or not out[2] >= 0.5:
            return
        prev, last = last, mu.real.copy()
        if first and k == 0:
            prev = last
        for i in range(n):
            q[i] = q[i] + dq[i]
            v[i] = 2.0 / dt * dq[i] - v[i]
        Y[k, :n], Y[k, n:], DQ[k], MU[k], IT[k], COND[k] = q, v, dq, last, out[0], out[1]
        done[0] = k + 1


@njit(cache=True)
def momenta(q, v, cols, mass, euler, out):
    """out (6,) <- (p, L) of model.director.SpatialBodies.momenta (the same sums in the same order): p = sum M_phi
    v_phi, L = sum phi x M_phi v_phi + sum_I d_I x E_I v_I about the origin (paper 004, the momentum map)."""
    out[:] = 0.0
    for b in range(cols.shape[0]):
        c = cols[b]
        p0, p1, p2 = mass[b] * v[c[0]], mass[b] * v[c[1]], mass[b] * v[c[2]]
        x0, x1, x2 = q[c[0]], q[c[1]], q[c[2]]
        L0, L1, L2 = x1 * p2 - x2 * p1, x2 * p0 - x0 * p2, x0 * p1 - x1 * p0
        for i in range(3):
            e = 3 + 3 * i
            d0, d1, d2 = q[c[e]], q[c[e + 1]], q[c[e + 2]]
            w0, w1, w2 = euler[b, i] * v[c[e]], euler[b, i] * v[c[e + 1]], euler[b, i] * v[c[e + 2]]
            L0 += d1 * w2 - d2 * w1
            L1 += d2 * w0 - d0 * w2
            L2 += d0 * w1 - d1 * w0
        out[0] += p0
        out[1] += p1
        out[2] += p2
        out[3] += L0
        out[4] += L1
        out[5] += L2


@njit(cache=True)
def _apply(q, col, v, out):
    """out (3,) <- D v = sum_I d_I v_I for the body whose columns start at ``col`` (col < 0: the ground, D = I)."""
    for i in range(3):
        out[i] = v[i] if col < 0 else q[col + 3 + i] * v[0] + q[col + 6 + i] * v[1] + q[col + 9 + i] * v[2]


@njit(cache=True)
def joint_coordinates(q, pcol, ccol, X1, X2, nv, m1v, m2v, a1, ref, kind, out):
    """out <- the relative coordinates of model.director.LowerPairs.relative_coordinates for the k pairs of one kind
    (1 R: theta; 2 C: u, theta; 3 P: u; 4 E: u1, u2, theta, per pair): pcol, ccol (k,) the parent's and child's
    first column (-1: the ground), the pairs' vectors in their body frames; theta = atan2(n . (r x a), r . a) with
    r = D_p ref, a = D_c a^2_1, u = n . d, u_i = m_i . d, d = phi_c + D_c X2 - phi_p - D_p X1
    (eqs 98, 116, 138, 152)."""
    w = np.empty((8, 3))
    n3, m1, m2, r, a, x1, x2, d = w[0], w[1], w[2], w[3], w[4], w[5], w[6], w[7]
    width = (0, 1, 2, 1, 3)[kind]
    for k in range(pcol.shape[0]):
        p, c = pcol[k], ccol[k]
        _apply(q, p, nv[k], n3)
        _apply(q, p, m1v[k], m1)
        _apply(q, p, m2v[k], m2)
        _apply(q, p, ref[k], r)
        _apply(q, c, a1[k], a)
        _apply(q, p, X1[k], x1)
        _apply(q, c, X2[k], x2)
        for i in range(3):
            d[i] = (q[c + i] + x2[i]) - (0.0 if p < 0 else q[p + i]) - x1[i]
        ra = r[0] * a[0] + r[1] * a[1] + r[2] * a[2]
        rxa = (n3[0] * (r[1] * a[2] - r[2] * a[1]) + n3[1] * (r[2] * a[0] - r[0] * a[2])
               + n3[2] * (r[0] * a[1] - r[1] * a[0]))
        theta = np.arctan2(rxa, ra)
        u = n3[0] * d[0] + n3[1] * d[1] + n3[2] * d[2]
        o = width * k
        if kind == 1:
            out[o] = theta
        elif kind == 2:
            out[o], out[o + 1] = u, theta
        elif kind == 3:
            out[o] = u
        elif kind == 4:
            out[o] = m1[0] * d[0] + m1[1] * d[1] + m1[2] * d[2]
            out[o + 1] = m2[0] * d[0] + m2[1] * d[1] + m2[2] * d[2]
            out[o + 2] = theta
