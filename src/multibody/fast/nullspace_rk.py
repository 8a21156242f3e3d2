"""The attempts of one adaptive explicit Runge-Kutta step of the null-space formulation in one compiled call (issue 16:
no Python work per stage), for ``--basis continuation`` and ``--basis flow`` on a compiled workspace without
prescribed motions or nonholonomic rows.

The readable reference, which defines the numbers, is ``RungeKutta._adaptive_attempts`` (integrate/explicit.py:
Hairer, Norsett & Wanner, Solving ODEs I, Sect. II.4 error norm (4.11) and step-size formula (4.13)) with the
formulation's ``rhs`` (:func:`.nullspace_rhs_kernels.continuation_rhs`, :func:`.nullspace_rhs_kernels.flow_rhs`) and its
error measure on the physical state [x, v] (``NullSpaceEquations.error_measure``, formulations.velocity_error; here
:func:`.nullspace_kernels.physical_error`, with v at the step's ends the x-parts of its first and last stages); the
controller, the error norm and the stage sums are those of :mod:`.rk_kernels`. tests/test_fast_nullspace.py checks that both take the same steps. A right-hand side the kernels
decline (path < 0: a singular configuration near, X^T M X not positive definite) or that is not finite, a step below
the minimum and a state inside the singular window (2 n entries: the lagrange equations) are handed back before
they happen: the caller repeats that attempt on the reference path.
"""
from __future__ import annotations

import numpy as np
from numba import njit

from .nullspace_kernels import physical_error
from .nullspace_rhs_kernels import continuation_rhs, flow_rhs
from .rk_kernels import HAND_BACK, OK, _combine, _error_norm, _factor, attempt_end, next_step


@njit(cache=True)
def _rhs(y, cont, cargs, fargs, counts):
    """(y', ok): continuation_rhs with cargs or flow_rhs with fargs; counts[path] += 1 (0 Cholesky, 1 SVD)."""
    if cont:
        out, path = continuation_rhs(y, *cargs)
    else:
        out, path = flow_rhs(y, *fargs)
    if path < 0:
        return out, False
    counts[path] += 1
    return out, np.all(np.isfinite(out))


@njit(cache=True)
def _stages(t, y, h, tab, K, cont, cargs, fargs, counts, y_new):
    """K[1:s] and y_new of a step t -> t + h (RungeKutta._stages); False if a stage's rhs is not valid."""
    c, a, b, e, s, fsal, order, stretch = tab
    last = s - 1 if fsal else s
    ys = np.empty(y.shape[0])
    for i in range(1, last):
        _combine(y, h, a[i], K, i, ys)
        out, ok = _rhs(ys, cont, cargs, fargs, counts)
        if not ok:
            return False
        K[i] = out
    _combine(y, h, b, K, last, y_new)
    if fsal:
        out, ok = _rhs(y_new, cont, cargs, fargs, counts)
        if not ok:
            return False
        K[s - 1] = out
    return True


@njit(cache=True)
def ns_attempts(t, y, h_abs, bounds, tab, ctrl, tols, K, nf, cont, cargs, fargs, filt, ae, counts):
    """Attempts of one step from (t, y) with |h| = h_abs until one is accepted (rk_kernels.rk_attempts' contract:
    returns (status, t_new, y_new, h_abs, h_next, err, rejected attempts, rhs evaluations, rejected); with HAND_BACK,
    h_abs and ``rejected`` describe the attempt the caller must make on the reference path). ae = A^T e (flow; empty
    for a chart): dq = h^2 sum_j ae_j K_j[w], the estimate of the independent coordinates (formulations.flow_error;
    RungeKutta's ``integral``)."""
    min_step, max_step = bounds[2], bounds[3]
    s, order, stretch = tab[4], tab[6], tab[7]
    N, n = y.shape[0], filt[7].shape[0] - 1
    y_new, err_vec = np.empty(N), np.empty(N)
    phys, p_old, p_new = np.empty(2 * n), np.empty(2 * n), np.empty(2 * n)     # [x, v]: error, start, end
    dq = np.zeros(nf if ae.shape[0] else 0)
    p_old[:n] = y[:n]
    p_old[n:] = K[0][:n]
    rejected, n_rejected, nfev, err = False, 0, 0, 0.0
    while True:
        if h_abs < min_step:
            return HAND_BACK, t, y_new, h_abs, 0.0, err, n_rejected, nfev, rejected
        t_new, h_abs = attempt_end(t, h_abs, bounds, stretch)
        before = counts[0] + counts[1]
        ok = _stages(t, y, t_new - t, tab, K, cont, cargs, fargs, counts, y_new)
        nfev += counts[0] + counts[1] - before
        if not ok:
            return HAND_BACK, t, y_new, h_abs, 0.0, err, n_rejected, nfev, rejected
        _combine(np.empty(0), t_new - t, tab[3], K, s, err_vec)
        if cont:
            T = cargs[3]
        else:
            T = y_new[n + nf:].reshape((n, nf))
        h = t_new - t
        for j in range(dq.shape[0]):
            acc = 0.0
            for i in range(ae.shape[0]):
                acc += ae[i] * K[i, n + j]
            dq[j] = h * h * acc
        physical_error(y_new, err_vec, nf, not cont, T, *filt, dq, phys)
        p_new[:n] = y_new[:n]
        if tab[5]:
            p_new[n:] = K[s - 1][:n]
        else:
            out, ok = _rhs(y_new, cont, cargs, fargs, counts)
            nfev += 1
            if not ok:
                return HAND_BACK, t, y_new, h_abs, 0.0, err, n_rejected, nfev, rejected
            p_new[n:] = out[:n]
        err = _error_norm(phys, p_old, p_new, tols[0], tols[1])
        if err <= 1.0:
            break
        n_rejected += 1
        rejected = True
        h_abs *= _factor(err, -1.0, order, ctrl)
    return OK, t_new, y_new, h_abs, next_step(err, h_abs, rejected, order, ctrl, max_step), err, n_rejected, nfev, \
        rejected
