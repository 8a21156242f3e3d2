"""The local rank rule of the sparse path's band solves (issue 12): band Cholesky factorisations that decide, row by
row in the band order of :mod:`.band`, which constraint rows to enforce near a singular configuration, relative to
each row's own scale instead of the whole Jacobian's (used by :mod:`.band_kernels` when ``tau`` < 0).
"""
from __future__ import annotations

import numpy as np
from numba import njit

#: the local rank rule of the sparse path (issue 12; ``tau`` < 0 in the kernels below): row j of A, in band order,
#: has the local ratio rho_j = d_j / G_jj, d_j the Cholesky pivot of G = A A^T: the squared sine of the angle
#: between row j and the rows before it (Golub & Van Loan, Sect. 4.2: the pivot is the squared distance of the row
#: from the span of the earlier ones). A row whose sine is below LOCAL_PIN is not enforced by the minimum-norm
#: solves (projection, error filter), as formulations.lagrange.PIN does with s_i / s_max in the dense rule; the
#: acceleration solve enforces row j with the penalty fade 1 / (1 + (LOCAL_REL^2 / rho_j)^4) (the dense rule's
#: (s_i / mu)^8, linalg.gauss_solve). Why local: near a singular configuration of a chain of loops the sine of the
#: loop's closing row is ~0.7 theta whatever the chain's length (theta the crank angle from the singular
#: configuration), while s_min / s_max of the whole A falls like 1 / N (0.21 theta for one cell, 0.017 theta for
#: 40): a window relative to the whole A is N times wider for the same loop.
LOCAL_PIN = 1e-5
LOCAL_REL = 1e-7
LOCAL_PIN_V = 1e-3
#: steps of iterative refinement of the sparse path's band Schur solve (see _refine)
REFINEMENT_STEPS = 2


@njit(cache=True)
def _pivot(S, j, w):
    """The pivot d_j of row j of the band Cholesky (rows before j already factored)."""
    d = S[j, 0]
    for l in range(max(0, j - w), j):
        d -= S[j, j - l] * S[j, j - l]
    return d


@njit(cache=True)
def _column(S, j, w, ljj):
    """Column j of the band factor below the diagonal, L_jj = ljj (np.inf: the row is dropped, the column is 0)."""
    m = S.shape[0]
    S[j, 0] = ljj
    for i in range(j + 1, min(j + w, m - 1) + 1):
        if ljj == np.inf:
            S[i, i - j] = 0.0
            continue
        x = S[i, i - j]
        for l in range(max(0, i - w), j):
            x -= S[i, i - l] * S[j, j - l]
        S[i, i - j] = x / ljj


@njit(cache=True)
def band_cholesky_drop(S, pin2, rho):
    """In place band Cholesky factor of S = A D A^T with the local rank decision (LOCAL_PIN): rho (m,) <- the local
    ratios d_j / S_jj; a row with rho_j < pin2 is dropped (L_jj = inf: :func:`band_cholesky_solve` then solves the
    system without that row and column, the minimum-norm solve over the other rows). Returns the number dropped."""
    m, w = S.shape[0], S.shape[1] - 1
    dropped = 0
    for j in range(m):
        diag = S[j, 0]
        d = _pivot(S, j, w)
        rho[j] = d / diag if diag > 0.0 else 0.0
        if not rho[j] >= pin2:
            dropped += 1
            _column(S, j, w, np.inf)
        else:
            _column(S, j, w, np.sqrt(d))
    return dropped


@njit(cache=True)
def band_cholesky_fade(S, rho, rel2, pen):
    """In place band Cholesky factor of S + E, E diagonal with E_jj = d_j (rel2 / rho_j)^4 (rho from the local rule
    of G, :func:`band_cholesky_drop`): Gauss's principle with row j enforced by the penalty fade
    1 / (1 + (rho_j / rel2)^-4), the row-wise form of linalg.gauss_solve's (s_i / mu)^8 (Bayo & Ledesma 1996; a
    diagonal added to S is the penalty 1 / E_jj on row j). Rows with E_jj > d_j / eps, or a pivot <= 0, are
    dropped. pen (m,) <- E_jj (inf: dropped). Returns the number of rows faded by more than eps."""
    m, w = S.shape[0], S.shape[1] - 1
    faded = 0
    for j in range(m):
        d = _pivot(S, j, w)
        ratio = rho[j] / rel2
        pen[j] = 0.0
        if not (d > 0.0 and ratio > 1e-4):
            faded += 1
            pen[j] = np.inf
            _column(S, j, w, np.inf)
            continue
        r4 = ratio * ratio * ratio * ratio
        if r4 < 1e16:
            faded += 1
            pen[j] = d / r4
            d += pen[j]
        _column(S, j, w, np.sqrt(d))
    return faded
