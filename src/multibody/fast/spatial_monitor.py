"""Compiled certificate of the singular-configuration monitor on spatial director models (issue 16: the crossing
monitor's SVDs cost ~0.7 ms per step of the six-body linkage). Used by
:class:`multibody.simulation.crossings.CrossingMonitor` (see :class:`DirectorCertificate` for the mathematics).

Paper 000 Sect. 2.5: a singular configuration is where the rank of A = Phi_q drops below its generic rank r.
Here X = A[rows] is r rows of A that are independent at the run's start (pivoted QR), and G = X X^T = L L^T.

- Interlacing (Horn & Johnson, Topics in Matrix Analysis, Cor. 3.1.3: deleting rows does not raise a singular
  value): sigma_r(A) >= sigma_r(X) = sigma_min(X). So rank A >= r wherever sigma_min(X) > 0.
- Relative perturbation (product inequality sigma_r(X B) >= sigma_r(X) sigma_min(B), B = I + X^+ E, X X^+ = I):
  sigma_min(X + E) >= sigma_min(X) (1 - |X^+ E|_2).
- |X^+ E|_2 <= |X^+ E|_F = |L^-1 E|_F: X^+ = X^T L^-T L^-1 and X^T L^-T has orthonormal columns.

So where the Cholesky factor of G exists, no rank drop fits in a piece [t_a, t_b] along which |L_a^-1 (X(t) -
X_a)|_F < 1. The quantity is relative to sigma_min(X_a) itself, unlike Weyl's |E|_2 / sigma_r: on the six-body
linkage A turns by 2-5 sigma_r per step (Weyl needs 4 inner samples per step) while |L^-1 (X_b - X_a)|_F is
0.17-0.28 per step.
"""
from __future__ import annotations

import numpy as np
from numba import njit

from .spatial_sparse import eval_rows, factor, row_pattern


@njit(cache=True)
def factor_rows(q, pat, tab, xv, L):
    """xv <- the non-zeros of X = Phi_q(q)[rows] (spatial_sparse.eval_rows, pat of fast.spatial_sparse.RowPattern),
    L (r, r) <- lower Cholesky factor of X X^T within its envelope (spatial_sparse.factor). Returns the smallest
    pivot ratio min_j L_jj^2 / max_j (X X^T)_jj (<= 0 if X X^T is not positive definite)."""
    eval_rows(q, pat, tab, xv)
    return factor(xv, pat, L)


@njit(cache=True)
def relative_change(L, first, rowptr, col, xa, xb, W):
    """|L^-1 (Xb - Xa)|_F for Xa, Xb with the non-zeros xa, xb at the same places (CSR lists rowptr, col as in
    fast.spatial_sparse.RowPattern), L L^T = Xa Xa^T zero left of column first[a] in row a: W (r, n) <- L^-1 (Xb -
    Xa) by forward substitution a whole row at a time (within L's envelope; the columns' leading zeros stay exact
    zeros), then the sum of squares column by column. An upper bound of |Xa^+ (Xb - Xa)|_2."""
    r, n = W.shape
    W[:, :] = 0.0
    for a in range(r):
        for p in range(rowptr[a], rowptr[a + 1]):
            W[a, col[p]] = xb[p] - xa[p]
    for a in range(r):
        for b in range(first[a], a):
            lab = L[a, b]
            if lab != 0.0:
                for j in range(n):
                    W[a, j] -= lab * W[b, j]
        d = L[a, a]
        for j in range(n):
            W[a, j] /= d
    total = 0.0
    for j in range(n):
        for a in range(r):
            total += W[a, j] * W[a, j]
    return np.sqrt(total)


#: most sub-pieces :meth:`DirectorCertificate.refine` cuts a piece into (the SVD monitor halves a piece at most 5
#: times: 32 pieces)
MAX_SUBPIECES = 32
#: X X^T is trusted below this smallest Cholesky pivot ratio no more (its round-off, ~eps / ratio relative on
#: |L^-1 E|_F, would then approach the certificate's margin): the piece gets the SVD monitor instead
MIN_PIVOT_RATIO = 1e-10
#: the rows are chosen anew (:meth:`DirectorCertificate.worn`) when the measure per unit time has grown by this factor
#: since the first piece after their choice
RENEW_FACTOR = 2.0


class DirectorCertificate:
    """The rows' factors at consecutive accepted states of a run; ``advance(q)`` -> True when the piece from the
    previous state to q is proven free of rank drops: ``safety`` |L^-1 (X_b - X_a)|_F < 1 from either end (a or
    b), ``safety`` the monitor's REFINE_SAFETY for the curvature of the path between the two states (the
    relative bound is taken for X(t) - X_a ~ s (X_b - X_a); A = Phi_q is affine in q, quadratic constraints)."""

    def __init__(self, table, rows, safety: float):
        self.table, self.safety = table, float(safety)
        self.pattern = row_pattern(table, rows)     # the rows in reverse Cuthill-McKee order, X's non-zeros
        self.rows = self.pattern.rows
        r, nnz = len(self.rows), self.pattern.nnz
        self.W = np.empty((r, table.n))
        self.now = (np.empty(nnz), np.zeros((r, r)))
        self.before = (np.empty(nnz), np.zeros((r, r)))
        self.ok = self.ok_before = False
        self.measure = np.inf       # the last piece's safety |L^-1 dX|_F (advance)
        self.fresh = None           # the first piece's measure per unit time (worn)
        self.counts = [0, 0]        # pieces certified, pieces left to the SVD monitor

    def start(self, q) -> bool:
        """Factor at the first state (nothing to certify yet); False if X X^T is ill-conditioned there."""
        self.ok = self._factor(q, *self.now)
        return self.ok

    def _factor(self, q, xv, L) -> bool:
        ratio = factor_rows(np.ascontiguousarray(q, dtype=np.float64), self.pattern.pat, self.table.tab, xv, L)
        return ratio >= MIN_PIVOT_RATIO

    def advance(self, q) -> bool:
        """Factor at q; True if the piece from the previous state to q is certified (see the class docstring)."""
        self.before, self.now = self.now, self.before
        self.ok_before, self.ok = self.ok, self._factor(q, *self.now)
        self.measure = self._pair(self.before, self.now) if self.ok_before and self.ok else np.inf
        cert = self.measure < 1.0
        self.counts[0 if cert else 1] += 1
        return bool(cert)

    def worn(self, length: float) -> bool:
        """Whether these rows have lost conditioning since they were chosen: the last piece's measure per unit time
        (``length`` its duration; |L^-1 dX|_F / dt ~ |dX/dt| / sigma_min(X)) above RENEW_FACTOR times the first
        piece's. Rows kept until a piece could not be certified even cut (the six-body linkage at h = 1 ms: the
        measure grew from 0.57 to 10-20 per step, ~30 % of the pieces cut into up to 31 sub-pieces) cost more factors
        than rows chosen anew (crossings.CrossingMonitor._certified: one pivoted QR)."""
        rate = self.measure / length if length > 0 else np.inf
        if not np.isfinite(rate):
            return False
        if self.fresh is None:
            self.fresh = rate
        return rate > RENEW_FACTOR * self.fresh

    def _pair(self, a, b) -> float:
        """safety |L^-1 (X_b - X_a)|_F from the end a, or from b where that one is not below 1 (the smaller)."""
        (xa, La), (xb, Lb) = a, b
        first, rowptr, col = (self.pattern.pat[k] for k in (9, 4, 5))
        m = self.safety * relative_change(La, first, rowptr, col, xa, xb, self.W)
        return m if m < 1.0 else min(m, self.safety * relative_change(Lb, first, rowptr, col, xb, xa, self.W))

    def subpieces(self) -> int:
        """Into how many equal sub-pieces the last piece is cut for :meth:`refine`: the measure of the whole piece
        (|L^-1 dX|_F grows about linearly with its length) with a margin, at most MAX_SUBPIECES; 0 (do not try)
        where an end had no factor or more would be needed."""
        if not np.isfinite(self.measure):
            return 0
        k = int(np.ceil(1.5 * self.measure))
        return k if 2 <= k <= MAX_SUBPIECES else 0

    def refine(self, inner) -> bool:
        """True if the last piece (not certified whole by :meth:`advance`) is certified sub-piece by sub-piece: the
        configurations ``inner`` (on the run's interpolant between its ends, in order) factored, and every pair of
        consecutive configurations from the previous state to q certified as in :meth:`advance`. The same bound on
        shorter pieces: a step of 10 ms on the six-body linkage (|L^-1 dX|_F ~ 5) needs ~8 factors instead of the SVD
        monitor's samples and located minima (~1 s a step)."""
        nnz, r = self.now[0].shape[0], self.now[1].shape[0]
        a = self.before
        for q in list(inner) + [None]:
            if q is None:
                b = self.now
            else:
                b = (np.empty(nnz), np.zeros((r, r)))
                if not self._factor(q, *b):
                    return False
            if not self._pair(a, b) < 1.0:
                return False
            a = b
        self.counts[0] += 1
        self.counts[1] -= 1
        return True
