"""Compiled per-step work of the Lagrange formulation on spatial director models (issue 16): :class:`SpatialStep`
is the spatial counterpart of :class:`~.step.FastStep` (same methods, same contract: None means "take the NumPy
reference"), on the packed constraint table of the :class:`~.spatial_lagrange.SpatialLagrangeRhs`; kernels and
the references they reproduce in :mod:`.spatial_step_kernels` and :mod:`.spatial_sparse`.

The rows of every solve are the formulation's ``active`` rows (an independent subset where rows are redundant:
``Lagrange._choose_rows``). The reference re-chooses them after each projection; this path keeps them while the
compiled solves accept them (pivot ratio >= SPATIAL_STEP_PIVOT_RATIO) and otherwise declines, so the reference
(with its row choice) runs for that step.
"""
from __future__ import annotations

import numpy as np

from ..linalg.rank import NORMAL_ERROR_WEIGHT
from .spatial_sparse import row_pattern, sparse_project, sparse_tangent_error

#: the normal-equation solves are used while the smallest Cholesky pivot ratio of X X^T is >= this (an
#: optimistic estimate of 1 / cond(X)^2: cond(X) <~ 300, so every direction of X has s_i >~ 3e-3 s_max, far
#: above the reference's pin (formulations.lagrange.PIN = 1e-4), where both solve the same problem and differ
#: by round-off ~eps / ratio = 2e-11 relative). The planar step_kernels use 1e-3; the six-body linkage's
#: sigma_r / sigma_1 = 0.014 puts its ratio at ~2e-4, below that
SPATIAL_STEP_PIVOT_RATIO = 1e-5
#: after a projection the rows are chosen anew (Lagrange._choose_rows, the reference's pivoted QR) once the
#: pivot ratio of X X^T has fallen below this fraction of its value right after the last choice. The reference
#: chooses after every step; on the six-body linkage the start's rows decay from 1.7e-3 to 4.5e-4 while the
#: best choice stays at 1.7e-3..4.9e-3, and the Schur solve of the right-hand side then declines (to the SVD)
RECHOOSE = 0.5


class SpatialStep:
    """``project(t, y)``, ``tangent_error(t, y, err)``, ``record(t, q, v)`` of FastStep for a formulation whose
    ``fast_rhs`` is a SpatialLagrangeRhs; ``declined`` counts the calls that returned None. The projection and the
    error filter work on the non-zeros of X (:mod:`.spatial_sparse`), the output on dense arrays."""

    spatial = True      # integrate.compiled_constraints: not the planar packed model

    def __init__(self, formulation, tau: float = SPATIAL_STEP_PIVOT_RATIO):
        rhs, model = formulation.fast_rhs, formulation.model
        n, m = model.n, rhs.table.m
        self.form, self.rhs, self.tab, self.n, self.tau = formulation, rhs, rhs.table.tab, n, float(tau)
        tol = formulation.projection_tol
        self.limit, self.iterations, self.polish = tol.position * model.length_scale, tol.max_iterations, tol.polish
        self.phi, self.G, self.gamma, self.dx = np.empty(m), np.empty((m, n)), np.empty(m), np.empty(n)
        self.A, self.ga, self.B, self.S = np.zeros((m, n + 1)), np.empty(m), np.zeros((m, n)), np.zeros((m, m))
        self.lam, self.full, self.N = np.empty(m), np.empty(m), np.empty((m, m))
        self.declined, self.chosen, self.rechosen = 0, None, 0
        self._rows, self._past = (None,), (None,)

    def rows(self):
        """(pattern, work) of the formulation's active rows: the fast.spatial_sparse.RowPattern (rows in reverse
        Cuthill-McKee order) and the sparse kernels' workspaces (xv (nnz,), L (r, r), r (r,))."""
        self._active()
        return self._rows[1], self._rows[3]

    def _active(self, active=None):
        """(active rows in the solves' order, dropped kept rows, their number) of the formulation's active rows, or
        of ``active`` (rows it had chosen before: :meth:`record_batch`)."""
        form = self.form
        if active is not None and active is not form.active:
            if self._past[0] is not active:
                pattern = row_pattern(self.rhs.table, active)
                self._past = (active, pattern.rows, np.ascontiguousarray(np.setdiff1d(form.keep, pattern.rows),
                                                                         dtype=np.int64))
            return self._past[1], self._past[2], len(self._past[1])
        if self._rows[0] is not form.active:     # chosen anew (Lagrange._choose_rows assigns a new array)
            pattern = row_pattern(self.rhs.table, form.active)
            dropped = np.ascontiguousarray(np.setdiff1d(form.keep, pattern.rows), dtype=np.int64)
            r = len(pattern.rows)
            self._rows = (form.active, pattern, dropped, (np.empty(pattern.nnz), np.zeros((r, r)), np.empty(r)))
        return self._rows[1].rows, self._rows[2], len(self._rows[1].rows)

    def project(self, t, y):
        """[q, v] projected onto Phi = 0 and A v = 0 (Lagrange.after_step), or None."""
        n = self.n
        pattern, (xv, L, r) = self.rows()
        q, v = np.array(y[:n], dtype=float), np.array(y[n: 2 * n], dtype=float)
        ratio = sparse_project(q, v, pattern.pat, self.tab, self.limit, self.iterations, self.polish, self.tau,
                               self.phi, xv, L, r, self.dx)
        if ratio < 0:
            self.chosen = None      # the reference projection runs and chooses the rows
            return self._count(None)
        if self.chosen is None:
            self.chosen = ratio
        elif ratio < RECHOOSE * self.chosen and self.form.choose_rows:     # the rows' conditioning halved
            self.form._choose_rows(t, q, v)
            self.chosen, self.rechosen = None, self.rechosen + 1
        return np.concatenate([q, v])

    def tangent_error(self, t, y, err):
        """Lagrange._tangent_error: the error with its normal parts scaled by NORMAL_ERROR_WEIGHT, or None."""
        pattern, (xv, L, r) = self.rows()
        out = np.empty_like(err)
        ok = sparse_tangent_error(np.ascontiguousarray(y, dtype=float), np.ascontiguousarray(err, dtype=float),
                                  NORMAL_ERROR_WEIGHT, pattern.pat, self.tab, self.tau, xv, L, r, self.dx, out)
        return self._count(out if ok else None)

    def record(self, t, q, v):
        """(q'' (n,), minimum-norm multipliers (m,), (max |Phi|, max |A v|), A (m, n)) at a state, or None: the
        batch kernel on this one state (fast.spatial_record.record_batch runs spatial_step_kernels.record)."""
        m = len(self.full)
        bad, acc, mult, viol, C, _, _ = self.record_batch(np.concatenate([q, v])[None], np.zeros(m, np.int64), 1)
        if bad >= 0:
            return None
        return acc[0], mult[0], (float(viol[0, 0]), float(viol[0, 1])), C[0]

    def record_batch(self, Y, group, pairs, active=None):
        """:meth:`record` of every state Y[s] = [q, v] in one compiled call (fast.spatial_record.record_batch), with
        the formulation's active rows or ``active`` (the rows it had when the states were stored); ``group`` (m,) the
        pair of each row, of ``pairs``: (index of the first state it declines or -1, q'' (k, n), multipliers (k, m),
        violations (k, 2), A (k, m, n), the left null basis N (k, p, m), the certificate (info (k, 6), squared row
        norms (k, m), the pairs' sums (k, p, pairs, n))) for fast.spatial_certify."""
        from .spatial_record import record_batch
        rhs, n, m = self.rhs, self.n, len(self.full)
        active, dropped, r = self._active(active)
        k, p = len(Y), len(dropped)
        acc, mult, viol, C = np.empty((k, n)), np.empty((k, m)), np.empty((k, 2)), np.empty((k, m, n))
        N, cert = np.empty((k, p, m)), (np.empty((k, 6)), np.empty((k, m)), np.empty((k, p, pairs, n)))
        work = (self.phi, self.G, self.gamma, self.A[:r], self.ga[:r], self.B[:r], self.S[:r, :r], self.lam[:r],
                np.empty(2 * n), self.full, self.N, np.empty((r, n)), np.zeros((r, r)))
        bad = record_batch(np.ascontiguousarray(Y, dtype=float), active, dropped, self.tab, rhs.Minv, rhs.diag,
                           rhs.f, rhs.tau, work, np.ascontiguousarray(group, dtype=np.int64), acc, mult, viol, C, N,
                           *cert)
        self.declined += bad >= 0
        return bad, acc, mult, viol, C, N, cert

    def _count(self, out):
        self.declined += out is None
        return out


def spatial_fast_step(formulation) -> SpatialStep | None:
    """A :class:`SpatialStep` for a Lagrange formulation whose compiled rhs is spatial, else None."""
    rhs = getattr(formulation, "fast_rhs", None)
    if rhs is None or not getattr(rhs, "spatial", False):
        return None
    return SpatialStep(formulation)
