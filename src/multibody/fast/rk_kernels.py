"""The attempts of one adaptive explicit Runge-Kutta step in one compiled call (issue 16 item 1: no Python work
per stage), for a Lagrange formulation whose right-hand side and tangent-space error filter are compiled
(:mod:`.lagrange`, :mod:`.band`, :mod:`.step`).

The readable reference, which defines the numbers, is ``RungeKutta._adaptive_attempts`` with ``_stages`` and
``_error_norm`` (integrate/explicit.py: Hairer, Norsett & Wanner, Solving ODEs I, Sect. II.4 error norm (4.11) and
step-size formula (4.13), Sect. II.5 DOPRI5; the PI controller of integrate/controllers.py), with the formulation's
``rhs`` and ``error_filter``; tests/test_fast_rk.py checks that both take the same steps. Whatever the compiled
call cannot vouch for (a right-hand side that is not finite or whose solve fails, an error filter that declines, a
step below the minimum) it hands back before it happens (status not OK), and the caller repeats that attempt on
the reference path, which raises the explanatory error or gives the reference's numbers.
"""
from __future__ import annotations

import numpy as np
from numba import njit

from .band_kernels import band_rhs, band_tangent_error
from .kernels import lagrange_rhs
from .step_kernels import tangent_error

#: status of :func:`rk_attempts`: an accepted step; the attempt the caller must repeat on the reference path; an
#: attempt whose stages and y_new are valid but whose error filter declined (the caller filters and judges it)
OK, HAND_BACK, FILTER_DECLINED = 0, 1, 2


@njit(cache=True)
def _rhs(y, ddf, dense, band, use_band, counts):
    """(y', ok) of kernels.lagrange_rhs, the band Schur solve first where ``use_band`` (FastLagrangeRhs.__call__;
    without the dense arrays, M of size 0: SparseBandRhs, whose fallback is the caller's); counts[0], counts[1]:
    Schur and SVD evaluations; ok False if the solve failed or declined without a fallback, or y' is not finite."""
    prim, pval, mcols, mloc, mvec, M, Minv, diag, f, rel, power, tau, qe, ve, A, gamma, B, S, lam = dense
    if use_band:
        out, ok = band_rhs(y, ddf, *band)
        if ok:
            counts[0] += 1
            return out, np.all(np.isfinite(out))
        if M.shape[0] == 0:
            return out, False
        tau = 0.0
    out, path = lagrange_rhs(y, ddf, prim, pval, mcols, mloc, mvec, M, Minv, diag, f, rel, power, tau, qe, ve, A,
                             gamma, B, S, lam)
    if path < 0:
        return out, False
    counts[path] += 1
    return out, np.all(np.isfinite(out))


@njit(cache=True)
def _filter(y, err, filt, band_filt, band, out):
    """err <- the formulation's error filter (Lagrange._tangent_error): step_kernels.tangent_error with filt, or
    band_kernels.band_tangent_error with band_filt (``band``); False where it declines."""
    if band:
        ok = band_tangent_error(y, err, *band_filt, out)
    else:
        ok = tangent_error(y, err, *filt, out)
    if ok:
        err[:] = out
    return ok


@njit(cache=True)
def _factor(err, err_prev, order, ctrl):
    """controllers.StepController.factor; err_prev < 0 stands for None (ctrl: safety, min, max factor, beta,
    PI_ALPHA_SHIFT, ERROR_NORM_FLOOR)."""
    safety, min_factor, max_factor, beta, shift, floor = ctrl[0], ctrl[1], ctrl[2], ctrl[3], ctrl[4], ctrl[5]
    if err == 0.0:
        return max_factor
    if not np.isfinite(err):
        return min_factor
    fac = safety * err ** -(1.0 / (order + 1) - shift * beta)
    if beta > 0.0 and err_prev >= 0.0:
        fac *= max(err_prev, floor) ** beta
    return min(max_factor, max(min_factor, fac))


@njit(cache=True)
def _combine(y, h, coef, K, count, out):
    """out = y + h * sum_{j < count} coef[j] K[j] (y of length 0: without y)."""
    for k in range(out.shape[0]):
        s = 0.0
        for j in range(count):
            s += coef[j] * K[j, k]
        out[k] = h * s if y.shape[0] == 0 else y[k] + h * s


@njit(cache=True)
def _error_norm(err, y, y_new, rtol, atol):
    """controllers.error_norm with a scalar atol."""
    if err.shape[0] == 0:
        return 0.0
    s = 0.0
    for k in range(err.shape[0]):
        x = err[k] / (atol + rtol * max(abs(y[k]), abs(y_new[k])))
        s += x * x
    return np.sqrt(s / err.shape[0])


@njit(cache=True)
def _stages(t, y, h, tab, K, ddf, dense, band, use_band, counts, y_new):
    """K[1:s] and y_new of a step t -> t + h (RungeKutta._stages); False if a stage's rhs is not valid."""
    c, a, b, e, s, fsal, order, stretch = tab
    last = s - 1 if fsal else s
    ys = np.empty(y.shape[0])
    for i in range(1, last):
        _combine(y, h, a[i], K, i, ys)
        out, ok = _rhs(ys, ddf, dense, band, use_band, counts)
        if not ok:
            return False
        K[i] = out
    _combine(y, h, b, K, last, y_new)
    if fsal:
        out, ok = _rhs(y_new, ddf, dense, band, use_band, counts)
        if not ok:
            return False
        K[s - 1] = out
    return True


@njit(cache=True)
def attempt_end(t, h_abs, bounds, stretch):
    """(t_new, |h|) of an attempt of |h| = h_abs from t (RungeKutta._adaptive_attempts): stretched onto t_bound when
    within ``stretch`` steps of it; bounds as :func:`rk_attempts`'."""
    t_bound, direction = bounds[0], bounds[1]
    t_new = t + direction * h_abs
    if direction * (t_new - t_bound) >= -stretch * h_abs:
        t_new = t_bound
    return t_new, abs(t_new - t)


@njit(cache=True)
def next_step(err, h_abs, rejected, order, ctrl, max_step):
    """|h| proposed after an accepted attempt of error norm err (no increase right after a rejection)."""
    factor = _factor(err, ctrl[6], order, ctrl)
    if rejected:
        factor = min(1.0, factor)
    return min(h_abs * factor, max_step)


@njit(cache=True)
def rk_attempts(t, y, h_abs, bounds, tab, ctrl, tols, K, ddf, dense, band, use_band, filt, band_filt, use_filter,
                counts):
    """Attempts of one step from (t, y) starting with |h| = h_abs until one is accepted (error norm <= 1).

    bounds (t_bound, direction, min_step, max_step); tab (c, a, b, e, stages, fsal, error order, last-step
    stretch); ctrl (controller parameters of :func:`_factor`, then the previous accepted error norm or -1); tols
    (rtol, atol); K (n_base, N) with K[0] = f(t, y), filled in place; dense, band: the arguments of the right-hand
    side (:func:`_rhs`); filt, band_filt: those of the error filter (:func:`_filter`; use_filter 0: none, 1: filt,
    2: band_filt). Returns (status, t_new, y_new, h_abs,
    h_next, err, rejected attempts, rhs evaluations, rejected): with status HAND_BACK, h_abs and ``rejected``
    describe the attempt the caller must make on the reference path; with FILTER_DECLINED, t_new, y_new and K
    are that attempt's, only its error is left to the caller."""
    min_step, max_step = bounds[2], bounds[3]
    c, a, b, e, s, fsal, order, stretch = tab
    N = y.shape[0]
    y_new, err_vec, filtered = np.empty(N), np.empty(N), np.empty(N)
    rejected, n_rejected, nfev, err = False, 0, 0, 0.0
    while True:
        if h_abs < min_step:
            return HAND_BACK, t, y_new, h_abs, 0.0, err, n_rejected, nfev, rejected
        t_new, h_abs = attempt_end(t, h_abs, bounds, stretch)
        before = counts[0] + counts[1]
        ok = _stages(t, y, t_new - t, tab, K, ddf, dense, band, use_band, counts, y_new)
        nfev += counts[0] + counts[1] - before
        if not ok:
            return HAND_BACK, t, y_new, h_abs, 0.0, err, n_rejected, nfev, rejected
        _combine(np.empty(0), t_new - t, e, K, s, err_vec)
        if use_filter and not _filter(y_new, err_vec, filt, band_filt, use_filter == 2, filtered):
            return FILTER_DECLINED, t_new, y_new, h_abs, 0.0, err, n_rejected, nfev, rejected
        err = _error_norm(err_vec, y, y_new, tols[0], tols[1])
        if err <= 1.0:
            break
        n_rejected += 1
        rejected = True
        h_abs *= _factor(err, -1.0, order, ctrl)
    return OK, t_new, y_new, h_abs, next_step(err, h_abs, rejected, order, ctrl, max_step), err, n_rejected, nfev, \
        rejected


@njit(cache=True)
def action_move(before, after, w, rtol, atol, floor, length):
    """(jump, turn, shift, tolerances) of the after-step action that took the physical state ``before`` = [q, v] to
    ``after`` (both finite): simulation.step_watch's jump in error scales (StepWatch.accepted) and
    :func:`simulation.step_watch.branch_move` with the weights w = sqrt(diag M) of a constant mass matrix (all ones if
    M has no diagonal), the same operations elementwise and the same maxima, so the same numbers; ``floor``:
    FLOOR_SCALES, ``length``: the model's length scale."""
    n = w.shape[0]
    jump, w_max, speed, moved, shift = 0.0, 0.0, 0.0, 0.0, 0.0
    for i in range(2 * n):
        jump = max(jump, abs(after[i] - before[i]) / (atol + rtol * max(abs(before[i]), abs(after[i]))))
    for j in range(n):
        w_max = max(w_max, w[j])
        speed = max(speed, w[j] * max(abs(before[n + j]), abs(after[n + j])))
        moved = max(moved, w[j] * abs(after[n + j] - before[n + j]))
        shift = max(shift, abs(after[j] - before[j]))
    speed = max(speed, floor * atol * w_max)
    if speed <= 0.0:
        return jump, 0.0, shift / length, 0.0
    turn = moved / speed
    return jump, turn, shift / length, turn / (rtol + atol * w_max / speed)
