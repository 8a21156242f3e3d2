"""The reaction-uniqueness flags of paper 003 at each stored state of a spatial director model (issue 16: they cost
1.4 ms per stored state of the six-body linkage, whose one redundant row gives C a left null space at every state).

:class:`SpatialReactionFlags` is :class:`multibody.analysis.solvability.ReactionFlags` (same series, same summary)
with the work of its reference, ``solvability`` and ``reaction_uniqueness`` (paper 003 eqs 7, 21-27), done once
and without its SVDs:

- the same pivoted QR of C (scipy.linalg.qr(C, pivoting=True), eq. 21), so the same R, rank decisions and left
  null space N = Q^col, to the last bit;
- the scale |C|_2 of every threshold test is bracketed: |C|_F / sqrt(min(m, n)) and the largest row and column
  norm below it, |C|_F above it (Golub & Van Loan, Matrix Computations, Sect. 2.3.2). A test that the bracket
  decides is decided; one that it does not takes the SVD (np.linalg.norm(C, 2)) as the reference does;
- B_X = C_X^T Q_X^col of every pair X at once, as one product with the pairs' row indicator. A pair whose
  max |B_X| the bracket does not decide with a margin of AMBIGUOUS (for the round-off of the other summation
  order) is recomputed as the reference computes it (C[idx].T @ N[idx], the exact |C|_2, its test), so summation
  order never decides a flag.

So the flags and the summary are the reference's (tests/test_fast_spatial_flags.py compares them along a run).

A spatial Lagrange run stores its states in batches (simulation.record_batch_spatial); there
:meth:`SpatialReactionFlags.certified` decides the flags of all states at once without a QR where
fast.spatial_certify's bounds decide every test, and :meth:`SpatialReactionFlags.record` (the above) takes the others.
"""
from __future__ import annotations

import numpy as np
import scipy.linalg as sla

from ..analysis.solvability import ReactionFlags, SolvabilityTolerance, null_variation, pair_rows
from .spatial_certify import AMBIGUOUS, bracket, certify


class _Scale:
    """|C|_2 bracketed (lo, hi), made exact (the SVD, as solvability's np.linalg.norm(C, 2)) when a test needs it."""

    def __init__(self, C: np.ndarray):
        lo, hi = bracket(C[None])
        self.C, self.lo, self.hi, self.exact = C, float(lo[0]), float(hi[0]), None

    def below(self, x: np.ndarray, tol: float, factor: float = 1.0) -> np.ndarray:
        """x <= tol * (factor |C|_2) elementwise (solvability's rank test with factor 1, reaction_uniqueness's with
        the length scale), in the reference's floating-point form once |C|_2 is exact."""
        x = np.asarray(x, dtype=float)
        if self.exact is None:
            low, high = x <= tol * factor * self.lo, x > tol * factor * self.hi
            if np.all(low | high):
                return low
            self.make_exact()
        return x <= tol * max(factor * self.exact, np.finfo(float).tiny)

    def make_exact(self) -> float:
        """|C|_2 by the SVD (np.linalg.norm(C, 2)), kept."""
        if self.exact is None:
            self.exact = float(np.linalg.norm(self.C, 2))
        return self.exact


class SpatialReactionFlags(ReactionFlags):
    """ReactionFlags whose per-state work is one pivoted QR (see the module docstring)."""

    def __init__(self, model, rmap, tol: SolvabilityTolerance = SolvabilityTolerance()):
        super().__init__(model, rmap, tol)
        self.labels = model.velocity_labels
        groups = pair_rows(self.labels)
        self.names = list(groups)
        self.rows = [np.asarray(idx) for idx in groups.values()]
        self.member = np.zeros((len(groups), len(model.velocity_labels)))
        for k, idx in enumerate(self.rows):
            self.member[k, idx] = 1.0
        # batched flags (fast.spatial_certify): the pair of each row, and the pair of each joint of the reaction map
        # (its rows_of column), if every joint is a pair
        self.group = np.zeros(len(self.labels), dtype=np.int64)        # the pair of each row
        for k, idx in enumerate(self.rows):
            self.group[idx] = k
        pairs = {tuple(row): k for k, row in enumerate(self.member)}
        found = [pairs.get(tuple(col)) for col in (rmap.rows_of.T if rmap is not None else ())]
        self.joint_pair = np.array(found, dtype=int) if None not in found else None

    def record(self, q: np.ndarray, C: np.ndarray) -> dict:
        """{series: (values, labels)} at configuration q with C ((m + h), n), as ReactionFlags.record."""
        C = np.asarray(C, dtype=float)
        if C.shape[0] == 0 or not np.any(C):
            return super().record(q, C)
        scale = _Scale(C)
        Q, R, _ = sla.qr(C, pivoting=True, mode="full")          # C E = Q R (eq. 21), as solvability
        diag = np.abs(np.diag(R))
        r = int(np.count_nonzero(~scale.below(diag, self.tol.rank)))
        if r == C.shape[0]:
            return self._all_unique()
        N = Q[:, r:]
        self.redundancy = max(self.redundancy, C.shape[0] - r)
        unique = self._pairs_unique(C, N, scale)
        self.non_unique.update(name for name, u in zip(self.names, unique) if not u)
        mult = ((self.member[:, :, None] * np.abs(N)[None]).max(axis=(1, 2), initial=0.0) <= self.tol.qr) @ self.member
        out = {"multipliers_unique": (mult, self.model.velocity_labels)}
        if self.rmap is not None:
            var = null_variation(self.rmap, q, C, N)
            factor = max(1.0, self.model.length_scale)
            out["reactions_unique"] = (scale.below(var, self.tol.qr, factor).astype(float), self.rmap.labels)
        return out

    def certified(self, Q, C, N, cert) -> list:
        """The flags of k states (q (k, n), C (k, m, n)) from the left null basis N (k, p, m) of the output kernel and
        its certificate (fast.spatial_record.certificate): a dict as :meth:`record`'s where every test is decided,
        None where one is not (the caller takes :meth:`record`); see fast.spatial_certify."""
        return certify(self, Q, C, N, cert)

    def _pairs_unique(self, C, N, scale) -> list:
        """Eq. 27 for every pair: max |C_X^T Q_X^col| <= qr |C|_2."""
        n, p = C.shape[1], N.shape[1]
        B = (self.member @ (C[:, :, None] * N[:, None, :]).reshape(C.shape[0], n * p)).reshape(-1, n * p)
        b = np.abs(B).max(axis=1, initial=0.0)
        out = []
        for k, idx in enumerate(self.rows):
            x = b[k]
            decided = x <= self.tol.qr * scale.lo * (1 - AMBIGUOUS) or x > self.tol.qr * scale.hi * (1 + AMBIGUOUS)
            if decided:
                out.append(bool(x <= self.tol.qr * scale.lo))
            else:       # as solvability: its B, its scale, its test
                x = float(np.max(np.abs(C[idx].T @ N[idx]), initial=0.0))
                out.append(x / scale.make_exact() <= self.tol.qr)
        return out
