"""Band LU with partial pivoting in compiled code, for the iteration matrix of the compiled generalized-alpha
Newton loop (:mod:`.generalized_alpha_kernels`): Golub & Van Loan, Matrix Computations, 4th ed., Sect. 4.3.5
(band Gaussian elimination with partial pivoting: L keeps the lower half bandwidth w, U grows to 2 w; the same
scheme as LAPACK's dgbtrf/dgbtrs), O(k w^2) to factor and O(k w) to solve a (k, k) matrix.
"""
from __future__ import annotations

from numba import njit


@njit(cache=True)
def band_factor(W, piv, lower, w, singular_pivot):
    """In-place band LU with partial pivoting of the (k, k) matrix stored as W[i, j - i + w] (|j - i| <= w;
    columns up to i + 2 w hold U's fill-in, zero on entry): P A = L U, the multipliers of column j in
    lower[j, :w], piv[j] the row swapped with j. False when a pivot is below singular_pivot times the largest
    (as DenseLU of the reference)."""
    k = W.shape[0]
    big = 0.0
    for j in range(k):
        last = min(j + w, k - 1)
        p = j
        for i in range(j + 1, last + 1):
            if abs(W[i, j - i + w]) > abs(W[p, j - p + w]):
                p = i
        piv[j] = p
        if p != j:
            for c in range(j, min(j + 2 * w, k - 1) + 1):
                W[j, c - j + w], W[p, c - p + w] = W[p, c - p + w], W[j, c - j + w]
        d = W[j, w]
        big = max(big, abs(d))
        if d == 0.0:
            return False
        for i in range(j + 1, last + 1):
            x = W[i, j - i + w] / d
            lower[j, i - j - 1] = x
            if x != 0.0:
                for c in range(j + 1, min(j + 2 * w, k - 1) + 1):
                    W[i, c - i + w] -= x * W[j, c - j + w]
    for j in range(k):
        if not abs(W[j, w]) > singular_pivot * big:
            return False
    return True


@njit(cache=True)
def band_solve(W, piv, lower, w, b):
    """x of A x = b with the factors of :func:`band_factor` (b overwritten and returned)."""
    k = W.shape[0]
    for j in range(k):
        p = piv[j]
        if p != j:
            b[j], b[p] = b[p], b[j]
        for i in range(j + 1, min(j + w, k - 1) + 1):
            b[i] -= lower[j, i - j - 1] * b[j]
    for i in range(k - 1, -1, -1):
        s = b[i]
        for c in range(i + 1, min(i + 2 * w, k - 1) + 1):
            s -= W[i, c - i + w] * b[c]
        b[i] = s / W[i, w]
    return b
