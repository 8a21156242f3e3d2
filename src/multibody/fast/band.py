"""The band Schur solve of the Lagrange right-hand side (issue 16 item 2), kernels in :mod:`.band_kernels`.

:class:`BandPattern` finds, once per model, the structure the kernels use: the entry pattern of A = Phi_q
(:func:`.entries.terms_entries`), the reverse Cuthill-McKee order of its rows (George & Liu 1981, Sect. 4.3) and
the list of entry pairs that share a column, which is S = A D A^T entry by entry. :class:`BandSchur` evaluates the
right-hand side with them: used by :class:`.lagrange.FastLagrangeRhs` on models with a diagonal mass matrix
(cost O(m w^2) instead of the dense Schur solve's O(m^2 n)) and, as :func:`sparse_band_rhs`, on the sparse path
of large models (n >= assembly.SPARSE_MIN_COORDINATES), where it replaces SuperLU and Python per evaluation.
Where the band solve declines (near a singular configuration, redundant rows) the caller's reference path runs.
"""
from __future__ import annotations

import numpy as np
import scipy.sparse as sp
from scipy.sparse.csgraph import reverse_cuthill_mckee

from ..linalg.sparse import SPARSE_PIVOT_RATIO
from .packed import PackedModel


class BandPattern:
    """``count``, ``rows``, ``cols``: the entry pattern of A (column n: the ground); ``iperm`` (m,): the band
    position of each row; ``w``: the half bandwidth of S; ``pairs`` = (pe, pf, pi, pd, pw) for
    :func:`.band_kernels.band_gram`."""

    def __init__(self, pack: PackedModel, n: int, m: int):
        from .entries import constraint_entries, entry_count     # numba loads only when a compiled path is used
        count = entry_count(pack)
        vals, rows, cols = np.zeros(count), np.zeros(count, np.int64), np.zeros(count, np.int64)
        qe = np.zeros(n + 1)
        count = constraint_entries(qe, qe, pack.prim, pack.pval, pack.mcols, pack.mloc, pack.mvec, vals, rows, cols)
        self.count, self.rows, self.cols = count, rows[:count], cols[:count]
        pe, pf = _column_pairs(self.cols, n)
        ri, rj = self.rows[pe], self.rows[pf]
        diag = np.arange(m)         # the pattern of S + S^T + I in one construction (canonical CSR)
        pattern = sp.csr_matrix((np.ones(2 * len(pe) + m), (np.r_[ri, rj, diag], np.r_[rj, ri, diag])), shape=(m, m))
        perm = reverse_cuthill_mckee(pattern, symmetric_mode=True) if m else np.zeros(0, np.int64)
        self.iperm = np.empty(m, np.int64)
        self.iperm[perm] = np.arange(m)
        bi, bj = self.iperm[ri], self.iperm[rj]
        hi, lo = np.maximum(bi, bj), np.minimum(bi, bj)
        self.w = int((hi - lo).max()) if len(hi) else 0
        pw = np.where((pe != pf) & (ri == rj), 2.0, 1.0)
        self.pairs = (pe.astype(np.int64), pf.astype(np.int64), hi.astype(np.int64), (hi - lo).astype(np.int64), pw)


def _column_pairs(cols: np.ndarray, n: int) -> tuple:
    """(pe, pf): the pairs of entries e <= f (in the order of np.triu_indices) of each column c < n, the columns in
    increasing order, the entries of a column in the order of ``cols`` (a stable sort); vectorised per group size
    (the pairs, hence the summation order of :func:`.band_kernels.band_gram`, are those of a loop over columns)."""
    live = np.flatnonzero(cols < n)
    order = live[np.argsort(cols[live], kind="stable")]          # entries grouped by column
    starts = np.searchsorted(cols[order], np.arange(n + 1))
    size = np.diff(starts)
    count = size * (size + 1) // 2                                  # pairs of each column
    offset = np.r_[0, np.cumsum(count)]
    pe, pf = np.zeros(offset[-1], np.int64), np.zeros(offset[-1], np.int64)
    for g in np.unique(size[size > 0]):
        c = np.flatnonzero(size == g)
        a, b = np.triu_indices(int(g))
        at = offset[c][:, None] + np.arange(len(a))
        pe[at], pf[at] = order[starts[c][:, None] + a], order[starts[c][:, None] + b]
    return pe, pf


class BandSchur:
    """``(y, ddf) -> (y', ok)``: the Lagrange right-hand side by :func:`.band_kernels.band_rhs` for a packed model
    with a diagonal mass matrix; ``ok`` False where the band solve declines. ``lam`` holds the multipliers of the
    last evaluation in band order (``pattern.iperm``)."""

    def __init__(self, pack: PackedModel, n: int, m: int, tau: float):
        from . import band_kernels
        if not pack.diag:
            raise ValueError("BandSchur needs a diagonal mass matrix")
        self.kernel, self.tau = band_kernels.band_rhs, float(tau)
        self.pattern = p = BandPattern(pack, n, m)
        self.pk = (pack.prim, pack.pval, pack.mcols, pack.mloc, pack.mvec)
        self.minv, self.f = np.ascontiguousarray(np.diag(pack.Minv)), pack.f
        self.work = (np.zeros(n + 1), np.zeros(n + 1), np.zeros(p.count), p.rows.copy(), p.cols.copy(), np.zeros(m),
                     np.zeros(m), np.zeros((m, p.w + 1)))

    def __call__(self, y, ddf):
        return self.kernel(y, ddf, self.pk, self.minv, self.f, self.tau, self.pattern.iperm, self.pattern.pairs,
                           self.work)


class SparseBandRhs:
    """``rhs(t, y) -> y'`` of a Lagrange formulation on the sparse path (``formulation.sparse``) by
    :class:`BandSchur`; where the band solve declines, the formulation's sparse reference
    (SparseLagrange.rhs: SuperLU, then the dense solve). ``paths``: [band, reference] evaluations."""

    spatial, sparse = False, True

    def __init__(self, formulation, pack: PackedModel, band: BandSchur):
        self.formulation, self.pack, self.band = formulation, pack, band
        self.ddf = np.zeros(formulation.ws.m)
        self.paths = [0, 0]

    def __call__(self, t, y):
        for row, motion in self.pack.motions:
            self.ddf[row] = motion(t)[2]
        if self.formulation.sparse_path.window:     # issue 12: the dense window (formulations.lagrange_sparse)
            self.paths[1] += 1
            return self.formulation.sparse_path.rhs(t, y)
        out, ok = self.band(y, self.ddf)
        if ok:
            self.paths[0] += 1
            return out
        self.paths[1] += 1
        return self.formulation.sparse_path.rhs(t, y)


#: the band solve replaces the dense Schur solve of a small model only when S's band (w + 1 diagonals) is at most
#: this fraction of its m columns: then it costs O(m w^2) against O(m^2 n), at least ~16 times less (the planar
#: chain of 10 bars: m = 22, w = 3, 3.6 against 10 us per evaluation). The built-in mechanisms (m <= 24, w >= 4 in
#: reverse Cuthill-McKee order) keep the dense solve and its numbers (tests/test_fast.py near singular configurations).
BAND_MAX_FRACTION = 0.25


def band_schur(pack: PackedModel, n: int, m: int, tau: float, always: bool = False) -> BandSchur | None:
    """A :class:`BandSchur` for a model with a diagonal mass matrix, constraint rows and ``tau`` > 0 whose band is
    narrow (BAND_MAX_FRACTION; ``always``: any band, for the sparse path); else None."""
    if not (pack.diag and m and tau > 0):
        return None
    band = BandSchur(pack, n, m, tau)
    return band if always or band.pattern.w + 1 <= BAND_MAX_FRACTION * m else None


class BandStep:
    """The per-step work of a Lagrange formulation on the sparse path with a :class:`SparseBandRhs`: ``project(t, y)``
    and ``tangent_error(t, y, err)`` as :class:`.step.FastStep` (the same iterations, kernels
    :func:`.band_kernels.band_project` and :func:`.band_kernels.band_tangent_error`) with band minimum-norm solves;
    None where they decline (then the formulation's sparse reference runs)."""

    #: what :meth:`record`'s multipliers are (the band Cholesky succeeded: S = A M^-1 A^T is nonsingular, A has
    #: full row rank, the multipliers are unique; as the sparse reference, formulations.lagrange_sparse)
    record_info = {"multipliers": "unique (sparse, full row rank)"}
    #: the pivot ratio below which :meth:`record` (and simulation.record_batch) declines a stored state: that of the
    #: sparse reference it stands in for there (linalg.sparse.SPARSE_PIVOT_RATIO on SuperLU's min |U_ii| / max |U_ii|,
    #: the pivots of a symmetric factorisation without pivoting in another order; the band's min L_jj^2 / max S_jj
    #: is never larger, max S_jj >= max L_jj^2), not the rhs's SCHUR_PIVOT_RATIO: a chain's ratio falls like 0.2 / N
    #: (2e-4 at N = 1000, far from any singular configuration), and the reference then solved the same Schur system
    #: at every stored state (issue 16)
    record_tau = SPARSE_PIVOT_RATIO

    def __init__(self, formulation, rhs: SparseBandRhs):
        from . import band_kernels
        from .step_kernels import MIN_NORM_PIVOT_RATIO
        from ..linalg.rank import NORMAL_ERROR_WEIGHT
        self.kernels, self.pack, n, m = band_kernels, rhs.pack, formulation.model.n, formulation.ws.m
        p = rhs.band.pattern
        self.pattern, self.pk, self.tau, self.weight = p, rhs.band.pk, MIN_NORM_PIVOT_RATIO, NORMAL_ERROR_WEIGHT
        self.forced = bool(formulation.forced_change)   # Lagrange._forced_change counted (issue 12gh)
        tol = formulation.projection_tol
        self.control = (tol.position * formulation.model.length_scale, tol.max_iterations, tol.polish, self.tau)
        self.work = (np.zeros(p.count), p.rows.copy(), p.cols.copy(), np.zeros((m, p.w + 1)))
        self.shift, self.dshift, self.ddf, self.n = np.zeros(m), np.zeros(m), np.zeros(m), n
        self.band, self.sparse_path = rhs.band, formulation.sparse_path

    def _window(self) -> bool:
        """Inside the sparse path's dense window (formulations.lagrange_sparse; a dense model has none)."""
        return self.sparse_path is not None and self.sparse_path.window

    def record(self, t, q, v):
        """(q'', lambda, (max |Phi|, max |A v + Phi_t|), A) at a stored state, as FastStep.record but with A as its
        entry triplets (vals, rows, cols) (duplicates summed, fast.entries; rows and cols the same at every state):
        the band Schur solve of the right-hand side (M q'' + A^T lambda = f, paper 000 eq. 3) and the violations,
        by :func:`.band_kernels.band_record_batch` of this one state, or None where the solve declines (then the
        sparse reference, simulation.recorder). Without prescribed motions (their f(t) enters Phi): else None."""
        if self.pack.motions:
            return None
        p, band = self.pattern, self.band
        acc, lam, viol, vals = (np.empty((1, k)) for k in (self.n, len(self.ddf), 2, p.count))
        if self.kernels.band_record_batch(np.concatenate([q, v])[None], band.pk, band.minv, band.f, self.record_tau,
                                          p.iperm, p.pairs, band.work, self.pack.poff, acc, lam, viol, vals) >= 0:
            return None
        return acc[0], lam[0][p.iperm], (viol[0, 0], viol[0, 1]), (vals[0], p.rows, p.cols)

    def project(self, t, y):
        """[q, v] projected onto Phi = 0 and A v + Phi_t = 0 (Lagrange.after_step), or None (also inside the dense
        window of formulations.lagrange_sparse)."""
        if self._window():
            return None
        n = self.n
        q, v = y[:n].copy(), y[n: 2 * n].copy()
        self.pack.drive(t, self.shift, self.dshift, self.ddf)
        ok = self.kernels.band_project(q, v, self.pk, self.pack.poff, self.shift, self.dshift, self.control,
                                       self.pattern.iperm, self.pattern.pairs, self.work)
        return np.concatenate([q, v]) if ok else None

    def tangent_error(self, t, y, err):
        """Lagrange._tangent_error: the error with its normal parts scaled by NORMAL_ERROR_WEIGHT plus the forced
        velocity change where ``forced`` (band_kernels.band_forced_change), or None (also inside the dense window)."""
        if self._window():
            return None
        out = np.empty_like(err)
        ok = self.kernels.band_tangent_error(y, err, self.weight, self.forced, self.pk, self.tau, self.pattern.iperm,
                                             self.pattern.pairs, self.work, out)
        return out if ok else None
