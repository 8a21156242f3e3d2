"""The attempts of one adaptive explicit Runge-Kutta step in one compiled call for the Lagrange formulation on
spatial director models (issue 16: "the compiled path covers spatial models too"): the spatial counterpart of
:func:`.rk_kernels.rk_attempts`, whose controller, error norm and stage combination it calls (one compiled copy of
each, :func:`.rk_kernels._factor`, :func:`.rk_kernels._error_norm`, :func:`.rk_kernels._combine`), on the compiled
spatial right-hand side (:func:`.spatial_sparse.lagrange_rhs_at`, as :class:`.spatial_lagrange.SpatialLagrangeRhs`)
and error filter (:func:`.spatial_sparse.sparse_tangent_error`, as :class:`.spatial_step.SpatialStep`).

The readable reference, which defines the numbers, is ``RungeKutta._adaptive_attempts`` with ``_stages`` and
``_error_norm`` (integrate/explicit.py: Hairer, Norsett & Wanner, Solving ODEs I, Sect. II.4 error norm (4.11) and
step-size formula (4.13), Sect. II.5 DOPRI5; the PI controller of integrate/controllers.py) with the formulation's
``rhs`` and ``error_filter``; tests/test_fast_spatial_rk.py checks that both take the same steps. Whatever this call
cannot vouch for (a Schur solve that declines, a right-hand side that is not finite, a step below the minimum) it
hands back before it happens (status HAND_BACK), and an error filter that declines leaves the attempt's error to
the caller (FILTER_DECLINED), as in rk_kernels.
"""
from __future__ import annotations

import numpy as np
from numba import njit

from .rk_kernels import FILTER_DECLINED, HAND_BACK, OK, _combine, _error_norm, _factor, attempt_end, next_step
from .spatial_sparse import lagrange_rhs_at, sparse_tangent_error

__all__ = ["OK", "HAND_BACK", "FILTER_DECLINED", "spatial_attempts"]


@njit(cache=True)
def _stages(y, h, tab, K, pat, qtab, mass, work, counts, y_new):
    """K[1:s] and y_new of a step of size h (RungeKutta._stages; the spatial models supported are autonomous, so
    the stage times do not enter); False if a stage's right-hand side is not valid. counts[0]: evaluations."""
    c, a, b, e, s, fsal, order, stretch = tab
    last = s - 1 if fsal else s
    ys, out = np.empty(y.shape[0]), np.empty(y.shape[0])
    for i in range(1, last):
        _combine(y, h, a[i], K, i, ys)
        if not lagrange_rhs_at(ys, pat, qtab, mass, work, out):
            return False
        counts[0] += 1
        K[i] = out
    _combine(y, h, b, K, last, y_new)
    if fsal:
        if not lagrange_rhs_at(y_new, pat, qtab, mass, work, out):
            return False
        counts[0] += 1
        K[s - 1] = out
    return True


@njit(cache=True)
def _filter(y, err, pat, qtab, filt, out):
    """err <- Lagrange._tangent_error's filtered error (spatial_sparse.sparse_tangent_error with filt = (weight,
    tau, xv, L, ax, dx)); False where it declines (X X^T ill-conditioned)."""
    weight, tau, xv, L, ax, dx = filt
    if not sparse_tangent_error(y, err, weight, pat, qtab, tau, xv, L, ax, dx, out):
        return False
    err[:] = out
    return True


@njit(cache=True)
def spatial_attempts(t, y, h_abs, bounds, tab, ctrl, tols, K, pat, qtab, mass, work, filt, filter_pat,
                     use_filter, counts):
    """Attempts of one step from (t, y) starting with |h| = h_abs until one is accepted (error norm <= 1), as
    rk_kernels.rk_attempts (same bounds, tab, ctrl, tols, K and results; the same loop, whose stages and filter
    numba cannot take as arguments of one cached kernel) with the spatial right-hand side on the
    rows of ``pat`` (spatial_sparse.lagrange_rhs_at with its mass and work; qtab the packed table
    fast.spatial.QuadraticTable.tab) and, with use_filter, the spatial error filter on the rows of ``filter_pat``
    (:func:`_filter`). Returns (status, t_new, y_new, h_abs,
    h_next, err, rejected attempts, rhs evaluations, rejected)."""
    min_step, max_step = bounds[2], bounds[3]
    order = tab[6]
    N = y.shape[0]
    y_new, err_vec, filtered = np.empty(N), np.empty(N), np.empty(N)
    rejected, n_rejected, nfev, err = False, 0, 0, 0.0
    while True:
        if h_abs < min_step:
            return HAND_BACK, t, y_new, h_abs, 0.0, err, n_rejected, nfev, rejected
        t_new, h_abs = attempt_end(t, h_abs, bounds, tab[7])
        before = counts[0]
        ok = _stages(y, t_new - t, tab, K, pat, qtab, mass, work, counts, y_new)
        nfev += counts[0] - before
        if not ok:
            return HAND_BACK, t, y_new, h_abs, 0.0, err, n_rejected, nfev, rejected
        _combine(np.empty(0), t_new - t, tab[3], K, tab[4], err_vec)
        if use_filter and not _filter(y_new, err_vec, filter_pat, qtab, filt, filtered):
            return FILTER_DECLINED, t_new, y_new, h_abs, 0.0, err, n_rejected, nfev, rejected
        err = _error_norm(err_vec, y, y_new, tols[0], tols[1])
        if err <= 1.0:
            break
        n_rejected += 1
        rejected = True
        h_abs *= _factor(err, -1.0, order, ctrl)
    return OK, t_new, y_new, h_abs, next_step(err, h_abs, rejected, order, ctrl, max_step), err, n_rejected, nfev, \
        rejected
