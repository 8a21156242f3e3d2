"""The entries of the constraint Jacobian A = Phi_q in a fixed sparse pattern, and the convective terms gamma
(paper 000 eq. 6), for the builder primitives of :mod:`.kernels` (issue 16): the compiled generalized-alpha
Newton loop (integrate/generalized_alpha_kernels.py) and the band Schur solve of :mod:`.band_kernels` read A as
(vals, rows, cols) triplets instead of the dense (m, n + 1) array of :func:`.kernels.assemble`, so their cost
stays O(n) on long chains. The numbers are those of :func:`.kernels.assemble` (the same branch per primitive,
duplicates summed by the readers), which tests/test_fast_band.py checks.
"""
from __future__ import annotations

import numpy as np
from numba import njit

from .kernels import ANGLE, COINCIDENT, COORDINATE_DRIVER, DISTANCE, _marker


@njit(cache=True)
def _emit(vals, rows, cols, e, r, k, mcols, mvec, dx, dy, bx, by):
    """Entries of (dx, dy)^T J_k in row r (J_k = [[1, 0, bx], [0, 1, by]], no identity part for a direction
    marker): the contributions kernels._add_row adds to A; returns the next entry index."""
    if mvec[k] == 0:
        vals[e], rows[e], cols[e] = dx, r, mcols[k, 0]
        vals[e + 1], rows[e + 1], cols[e + 1] = dy, r, mcols[k, 1]
        e += 2
    vals[e], rows[e], cols[e] = dx * bx + dy * by, r, mcols[k, 2]
    return e + 1


@njit(cache=True)
def terms_entries(qe, ve, prim, pval, mcols, mloc, mvec, vals, rows, cols, gamma):
    """The entries (vals, rows, cols) of A = Phi_q, duplicates to be summed as in kernels.assemble (paper 000
    eq. 6; the same branch per primitive), and, unless gamma has length 0, gamma (m,) without the drivers' f''
    (kernels.assemble); returns the number of entries. Column n is the ground's (ignored by the callers)."""
    e, with_gamma = 0, gamma.shape[0] > 0
    for p in range(prim.shape[0]):
        kind, r, a, b, c = prim[p, 0], prim[p, 1], prim[p, 2], prim[p, 3], prim[p, 4]
        if kind == ANGLE or kind == COORDINATE_DRIVER:
            if kind == ANGLE:
                vals[e], rows[e], cols[e] = -1.0, r, a
                vals[e + 1], rows[e + 1], cols[e + 1] = 1.0, r, b
                e += 2
            else:
                vals[e], rows[e], cols[e] = 1.0, r, a
                e += 1
            if with_gamma:
                gamma[r] = 0.0
            continue
        pix, piy, bix, biy, vix, viy, cix, ciy = _marker(a, mcols, mloc, mvec, qe, ve)
        pjx, pjy, bjx, bjy, vjx, vjy, cjx, cjy = _marker(b, mcols, mloc, mvec, qe, ve)
        if kind == COINCIDENT:
            e = _emit(vals, rows, cols, e, r, a, mcols, mvec, 1.0, 0.0, bix, biy)
            e = _emit(vals, rows, cols, e, r, b, mcols, mvec, -1.0, 0.0, bjx, bjy)
            e = _emit(vals, rows, cols, e, r + 1, a, mcols, mvec, 0.0, 1.0, bix, biy)
            e = _emit(vals, rows, cols, e, r + 1, b, mcols, mvec, 0.0, -1.0, bjx, bjy)
            if with_gamma:
                gamma[r], gamma[r + 1] = cjx - cix, cjy - ciy
        elif kind == DISTANCE:
            L, dx, dy, ddx, ddy = pval[p], pix - pjx, piy - pjy, vix - vjx, viy - vjy
            e = _emit(vals, rows, cols, e, r, a, mcols, mvec, dx / L, dy / L, bix, biy)
            e = _emit(vals, rows, cols, e, r, b, mcols, mvec, -dx / L, -dy / L, bjx, bjy)
            if with_gamma:
                gamma[r] = -(ddx * ddx + ddy * ddy + dx * (cix - cjx) + dy * (ciy - cjy)) / L
        else:  # LINE_PROJECTION: e = marker c (direction on the body of p_i)
            ex, ey, bex, bey, vex, vey, cex, cey = _marker(c, mcols, mloc, mvec, qe, ve)
            dx, dy, ddx, ddy = pjx - pix, pjy - piy, vjx - vix, vjy - viy
            e = _emit(vals, rows, cols, e, r, c, mcols, mvec, dx, dy, bex, bey)
            e = _emit(vals, rows, cols, e, r, a, mcols, mvec, -ex, -ey, bix, biy)
            e = _emit(vals, rows, cols, e, r, b, mcols, mvec, ex, ey, bjx, bjy)
            if with_gamma:
                gamma[r] = -(cex * dx + cey * dy + 2.0 * (vex * ddx + vey * ddy) + ex * (cjx - cix) + ey * (cjy - ciy))
    return e


@njit(cache=True)
def constraint_entries(qe, ve, prim, pval, mcols, mloc, mvec, vals, rows, cols):
    """The entries of A only (:func:`terms_entries` without gamma); returns their number."""
    return terms_entries(qe, ve, prim, pval, mcols, mloc, mvec, vals, rows, cols, np.empty(0))


def entry_count(pack) -> int:
    """Number of entries :func:`terms_entries` writes (a body marker has 3 columns, a direction marker 1)."""
    width = np.where(pack.mvec == 0, 3, 1)
    total = 0
    for kind, _, a, b, c in pack.prim:
        if kind == ANGLE:
            total += 2
        elif kind == COORDINATE_DRIVER:
            total += 1
        else:
            total += {COINCIDENT: 2, DISTANCE: 1}.get(kind, 1) * (width[a] + width[b]) + \
                (width[c] if kind not in (COINCIDENT, DISTANCE) else 0)
    return int(total)
