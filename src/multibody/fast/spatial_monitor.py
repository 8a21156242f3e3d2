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

from .spatial_step_kernels import first_nonzero, gather_rows, gram_factor, rcm_rows


@njit(cache=True)
def factor_rows(q, rows, hk, hi, hj, hv, gk, gi, gv, c, phi, G, X, L):
    """X (r, n) <- Phi_q(q)[rows] from the packed table (spatial_step_kernels.gather_rows), L (r, r) <- lower Cholesky
    factor of X X^T (spatial_step_kernels.gram_factor). Returns the smallest pivot ratio min_j L_jj^2 / max_j (X X^T)_jj (<= 0
    if X X^T is not positive definite)."""
    gather_rows(q, rows, hk, hi, hj, hv, gk, gi, gv, c, phi, G, X)
    return gram_factor(X, L)


@njit(cache=True)
def relative_change(L, Xa, Xb, w):
    """|L^-1 (Xb - Xa)|_F (forward substitution column by column, from the column's first non-zero and within L's
    envelope; w (r,) workspace): an upper bound of |Xa^+ (Xb - Xa)|_2 when L L^T = Xa Xa^T."""
    r, n = Xa.shape
    first = np.empty(r, dtype=np.int64)
    for a in range(r):
        first[a] = first_nonzero(L, a)
    total = 0.0
    for i in range(n):
        start = r         # rows above the column's first non-zero stay zero in L^-1 E (L lower triangular)
        for a in range(r):
            if Xb[a, i] != Xa[a, i]:
                start = a
                break
        for a in range(start, r):
            s = Xb[a, i] - Xa[a, i]
            for b in range(max(first[a], start), a):
                s -= L[a, b] * w[b]
            w[a] = s / L[a, a]
            total += w[a] * w[a]
    return np.sqrt(total)


#: most sub-pieces :meth:`DirectorCertificate.refine` cuts a piece into (the SVD monitor halves a piece at most 5
#: times: 32 pieces)
MAX_SUBPIECES = 32
#: X X^T is trusted below this smallest Cholesky pivot ratio no more (its round-off, ~eps / ratio relative on
#: |L^-1 E|_F, would then approach the certificate's margin): the piece gets the SVD monitor instead
MIN_PIVOT_RATIO = 1e-10


class DirectorCertificate:
    """The rows' factors at consecutive accepted states of a run; ``advance(q)`` -> True when the piece from the
    previous state to q is proven free of rank drops: ``safety`` |L^-1 (X_b - X_a)|_F < 1 from either end (a or
    b), ``safety`` the monitor's REFINE_SAFETY for the curvature of the path between the two states (the
    relative bound is taken for X(t) - X_a ~ s (X_b - X_a); A = Phi_q is affine in q, quadratic constraints)."""

    def __init__(self, table, rows, safety: float):
        self.table, self.rows, self.safety = table, rcm_rows(table, rows), float(safety)
        r, n = len(self.rows), table.n
        self.phi, self.G, self.w = np.empty(table.m), np.empty((table.m, n)), np.empty(r)
        self.now = (np.empty((r, n)), np.empty((r, r)))
        self.before = (np.empty((r, n)), np.empty((r, r)))
        self.ok = self.ok_before = False
        self.measure = np.inf       # the last piece's safety |L^-1 dX|_F (advance)
        self.counts = [0, 0]        # pieces certified, pieces left to the SVD monitor

    def start(self, q) -> bool:
        """Factor at the first state (nothing to certify yet); False if X X^T is ill-conditioned there."""
        self.ok = self._factor(q, *self.now)
        return self.ok

    def _factor(self, q, X, L) -> bool:
        ratio = factor_rows(np.ascontiguousarray(q, dtype=np.float64), self.rows, *self.table.tab, self.phi,
                            self.G, X, L)
        return ratio >= MIN_PIVOT_RATIO

    def advance(self, q) -> bool:
        """Factor at q; True if the piece from the previous state to q is certified (see the class docstring)."""
        self.before, self.now = self.now, self.before
        self.ok_before, self.ok = self.ok, self._factor(q, *self.now)
        self.measure = self._pair(self.before, self.now) if self.ok_before and self.ok else np.inf
        cert = self.measure < 1.0
        self.counts[0 if cert else 1] += 1
        return bool(cert)

    def _pair(self, a, b) -> float:
        """safety |L^-1 (X_b - X_a)|_F from the end a, or from b where that one is not below 1 (the smaller)."""
        (Xa, La), (Xb, Lb) = a, b
        m = self.safety * relative_change(La, Xa, Xb, self.w)
        return m if m < 1.0 else min(m, self.safety * relative_change(Lb, Xb, Xa, self.w))

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
        r, n = self.now[0].shape
        a = self.before
        for q in list(inner) + [None]:
            if q is None:
                b = self.now
            else:
                b = (np.empty((r, n)), np.empty((r, r)))
                if not self._factor(q, *b):
                    return False
            if not self._pair(a, b) < 1.0:
                return False
            a = b
        self.counts[0] += 1
        self.counts[1] -= 1
        return True
