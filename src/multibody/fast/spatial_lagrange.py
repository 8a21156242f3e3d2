"""Compiled right-hand side of the Lagrange formulation for spatial director models (issue 16: "the compiled path
covers spatial models too"): one compiled call per evaluation (:func:`.spatial_kernels.lagrange_rhs`), the
constraints from the packed table of :mod:`.spatial` and the Schur complement solve of the planar path
(:func:`.kernels.schur_solve`, see :mod:`.lagrange` for why it agrees with the reference's Gauss solve to
round-off while its pivot ratio stays above a threshold, here SPATIAL_SCHUR_PIVOT_RATIO). The rows of the solve are the formulation's
``active`` rows (an independent subset where rows are redundant, as the six-body linkage's one row of 60: the
formulation's choose_rows); where the Schur solve declines, the evaluation takes the reference path
(``Lagrange._solve``, SVD), which stays the readable definition of the numbers.

Supported (:func:`spatial_lagrange_supported`): :func:`.spatial.spatial_supported` models with forces that are
uniform gravity (ConstantForce) or none, a positive definite mass matrix, the plain Lagrange solve without
Baumgarte terms or ``eliminate``.
"""
from __future__ import annotations

import numpy as np

from ..model.forces import ConstantForce
from .spatial import QuadraticTable, SpatialWorkspace, quadratic_table, spatial_supported

#: the Schur/Cholesky solve is used while its smallest pivot ratio min_j L_jj^2 / max_j S_jj is >= this. Lower
#: than the planar path's SCHUR_PIVOT_RATIO (1e-3): S = A M^-1 A^T of a director model carries the spread of
#: the masses and the Euler tensors' principal values E_I (six-body linkage: cond(S) = 2.6e6, pivot ratio
#: 1.7e-5 at the start, so the planar threshold sent every evaluation to the SVD). Measured there, the Schur
#: and the reference (Gauss, SVD) accelerations agree to 3.6e-14 relative (tests/test_fast_spatial.py checks
#: 1e-12); the a-priori bound eps cond(S) ~ 1/ratio * eps stays below 2.2e-10 at the threshold
SPATIAL_SCHUR_PIVOT_RATIO = 1e-6


def spatial_lagrange_supported(formulation) -> str | None:
    """None if :class:`SpatialLagrangeRhs` applies to this Lagrange formulation, else the reason it does not."""
    model = formulation.model
    reason = spatial_supported(model)
    if reason:
        return reason
    if not formulation.plain_solve:
        return f"formulation '{formulation.name}' solves differently"
    if formulation.stabilization.kind == "baumgarte":
        return "Baumgarte stabilization"
    if len(formulation.keep) != formulation.ws.m:
        return "row elimination"
    bad = [type(e).__name__ for e in model.forces if type(e) is not ConstantForce]
    if bad:
        return f"force elements {', '.join(bad)}"
    try:        # the Schur solve needs M^-1: a flat body has an Euler tensor value E_3 = 0 (eq. 158)
        np.linalg.cholesky(np.asarray(model.mass_matrix, dtype=float))
    except np.linalg.LinAlgError:
        return "mass matrix not positive definite"
    return None


class SpatialLagrangeRhs:
    """``rhs(t, y) -> y'`` (2n,) of a supported Lagrange formulation on a spatial model in one compiled call;
    ``paths[0]``, ``paths[1]``: how many evaluations used the Schur and the reference solve."""

    spatial = True      # fast.step: the planar per-step kernels do not apply; the reference per-step work runs

    def __init__(self, formulation, table: QuadraticTable, schur_pivot_ratio: float = SPATIAL_SCHUR_PIVOT_RATIO):
        model, n = formulation.model, formulation.model.n
        self.formulation, self.table, self.tau = formulation, table, float(schur_pivot_ratio)
        M = np.asarray(model.mass_matrix, dtype=float)
        self.Minv = np.ascontiguousarray(np.linalg.inv(M))
        self.diag = bool(np.count_nonzero(M - np.diag(np.diag(M))) == 0)
        if self.diag:
            self.Minv = np.diag(1.0 / np.diag(M))
        self.f = np.ascontiguousarray(formulation.ws.forces(0.0, model.q0, model.v0), dtype=float)
        self.paths = [0, 0]
        self.minv, self._rows = np.ascontiguousarray(np.diag(self.Minv)), (None, None)
        self.mass = (self.minv, self.Minv, self.diag, self.f, self.tau)
        from .spatial_sparse import lagrange_rhs_at
        self._kernel = lagrange_rhs_at

    def rows(self):
        """The kernel's arguments for the formulation's active rows: (pattern (fast.spatial_sparse.RowPattern: the
        rows in the solve's order, reverse Cuthill-McKee), work), prepared anew when the formulation chose new rows
        (Lagrange._choose_rows assigns a new array)."""
        if self._rows[0] is not self.formulation.active:
            self._prepare(self.formulation.active)
        return self._rows[1:]

    def __call__(self, t, y):
        form = self.formulation
        pattern, work = self.rows()
        if y.dtype != np.float64 or not y.flags.c_contiguous:
            y = np.ascontiguousarray(y, dtype=np.float64)
        out = np.empty(2 * self.table.n)
        if not self._kernel(y, pattern.pat, self.table.tab, self.mass, work, out):
            self.paths[1] += 1
            q, v = form.split(t, y)
            return np.concatenate([v, form._solve(t, q, v)[1]])
        self.paths[0] += 1
        return out

    def _prepare(self, active) -> None:
        """The pattern of these active rows and workspaces sized for them (spatial_sparse.lagrange_rhs_at: xv,
        phi, G, gamma, A, ga, B, S, lam)."""
        from .spatial_sparse import row_pattern
        pattern = row_pattern(self.table, active)
        r, n, m = len(pattern.rows), self.table.n, self.table.m
        work = (np.empty(pattern.nnz), np.empty(m), np.empty((m, n)), np.empty(m), np.zeros((r, n + 1)),
                np.empty(r), np.zeros((r, n)), np.zeros((r, r)), np.zeros(r))
        self._rows = (active, pattern, work)


def spatial_lagrange_rhs(formulation) -> SpatialLagrangeRhs | None:
    """A :class:`SpatialLagrangeRhs` for a supported formulation (which then evaluates its constraints with a
    :class:`~.spatial.SpatialWorkspace`), else None."""
    if spatial_lagrange_supported(formulation) is not None:
        return None
    table = quadratic_table(formulation.model)      # None: a cold cache under the background policy
    if table is None:
        return None
    rhs = SpatialLagrangeRhs(formulation, table)
    # the per-step work (projection, crossing monitor, output) evaluates the constraints in compiled calls too
    formulation.ws = SpatialWorkspace(formulation.model, rhs.table)
    # the recorder's reaction-uniqueness flags: one pivoted QR per stored state instead of three SVDs
    from .spatial_flags import SpatialReactionFlags
    formulation.reaction_flags = SpatialReactionFlags
    return rhs
