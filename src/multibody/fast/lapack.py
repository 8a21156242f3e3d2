"""The pivoted QR of :func:`multibody.linalg.rank.pivoted_qr` by two direct LAPACK calls (issue 16 item 1):
``geqp3`` and ``orgqr``, the routines ``scipy.linalg.qr(..., pivoting=True, mode="full")`` calls, with the same
arguments (so the same numbers), without its checks and workspace queries (half the time for the n ~ 15 of the
null-space formulation's per-step factorisation, measured).
"""
from __future__ import annotations

import numpy as np
from scipy.linalg.lapack import dgeqp3, dorgqr

from ..linalg.rank import PivotedQR, RankTolerance, _rank_from_diag, pivoted_qr

#: LAPACK workspace (doubles): above the optimum 2 N + (N + 1) NB (NB ~ 32-64) of geqp3 and N NB of orgqr for the
#: small models this path serves (n <= 200); larger ones use pivoted_qr
WORK = 16384


def fast_pivoted_qr(A: np.ndarray, tolerance: RankTolerance = RankTolerance()) -> PivotedQR:
    """pivoted_qr(A, tolerance) (A^T P = Q R, paper 000 eq. 23, and its rank decision) by direct LAPACK calls."""
    m, n = A.shape
    if m == 0 or n > 200 or A.dtype != np.float64:
        return pivoted_qr(A, tolerance)
    a = np.array(A.T, order="F")                 # (M, N) = (n, m), as scipy.linalg.qr(A.T) factorises
    qr, jpvt, tau, _, info = dgeqp3(a, lwork=WORK, overwrite_a=1)
    if info != 0:
        return pivoted_qr(A, tolerance)
    R = np.triu(qr)
    if n < m:
        full = np.array(qr[:, :n], order="F")
    else:
        full = np.empty((n, n), order="F")
        full[:, :m] = qr
    Q, _, info = dorgqr(full, tau, lwork=WORK, overwrite_a=1)
    if info != 0:
        return pivoted_qr(A, tolerance)
    diag = np.abs(np.diag(R))
    return PivotedQR(Q, R, jpvt - 1, _rank_from_diag(diag, tolerance), diag, tolerance)
