"""Compiled evaluation of the spatial director models (issue 16: the cost of spatial models): their quadratic
constraints (paper 004 Sects 3-4) packed once into one table of non-zero entries (:class:`QuadraticTable`), and
the constrained energy-momentum step's Newton iteration (paper 004 eq. 10) in one compiled call
(:func:`constrained_step`). Kernels and the formulas they evaluate: :mod:`.spatial_kernels`.

Supported (:func:`spatial_supported`): every constraint group a time-independent
:class:`~multibody.model.director.QuadraticConstraints` (bodies, lower pairs; no drivers), no nonholonomic rows,
a constant mass matrix, numba importable. Otherwise the callers keep their NumPy reference path, which stays the
readable definition of the numbers. A cold kernel cache follows the cold-start policy of :mod:`.warm`
(:mod:`.spatial_warm`).
"""
from __future__ import annotations

import numpy as np

from scipy.linalg.lapack import dgeqp3

from ..assembly import Workspace
from ..linalg.rank import RankTolerance, _rank_from_diag, pivoted_qr
from ..model.director import QuadraticConstraints
from .lapack import WORK
from .packed import numba_available

_RANK = RankTolerance()     # pivoted_qr's default rank decision


def spatial_supported(model) -> str | None:
    """None if :class:`QuadraticTable` can evaluate this model's constraints, else the reason it cannot."""
    if not numba_available():
        return "numba is not installed"
    if model.h:
        return "nonholonomic rows"
    if not model.constraints:
        return "no constraint rows"
    if model.mass_matrix is None:
        return "configuration-dependent mass matrix"
    bad = [type(g).__name__ for g in model.constraints
           if not isinstance(g, QuadraticConstraints) or g.motions or hasattr(g, "hessian_sum_at")]
    return f"constraint groups {', '.join(bad)}" if bad else None


class QuadraticTable:
    """All rows Phi_k = 1/2 x^T H_k x + g_k^T x + c_k (x = q[cols_k], model.director) of a supported model as
    entry lists over the model's coordinates: H entries (hk, hi, hj, hv), g entries (gk, gi, gv), constants c
    (m,). Entries at the ground column (index n, where q_e = 0) are dropped: they add nothing to Phi, and
    their Jacobian column is not one of q's."""

    def __init__(self, model):
        n = model.n
        hk, hi, hj, hv, gk, gi, gv, c = [], [], [], [], [], [], [], []
        start = 0
        for g in model.constraints:
            k, a, b = np.nonzero(g.H)
            keep = (g.cols[k, a] < n) & (g.cols[k, b] < n)
            hk.append(start + k[keep]), hi.append(g.cols[k, a][keep]), hj.append(g.cols[k, b][keep])
            hv.append(g.H[k, a, b][keep])
            k, a = np.nonzero(g.g)
            keep = g.cols[k, a] < n
            gk.append(start + k[keep]), gi.append(g.cols[k, a][keep]), gv.append(g.g[k, a][keep])
            c.append(np.asarray(g.c, float))
            start += g.rows
        ints = lambda parts: np.ascontiguousarray(np.concatenate(parts), dtype=np.int64)   # noqa: E731
        floats = lambda parts: np.ascontiguousarray(np.concatenate(parts), dtype=np.float64)  # noqa: E731
        self.n, self.m = n, start
        self.tab = (ints(hk), ints(hi), ints(hj), floats(hv), ints(gk), ints(gi), floats(gv), floats(c))
        self.phi, self.G = np.empty(self.m), np.empty((self.m, n))

    def evaluate(self, q: np.ndarray):
        """Phi (m,) and Phi_q (m, n) at q (n,) (fresh arrays): Workspace.constraints' first two values."""
        from .spatial_kernels import quad_eval
        phi, G = np.empty(self.m), np.empty((self.m, self.n))
        quad_eval(np.ascontiguousarray(q, dtype=np.float64), *self.tab, phi, G)
        return phi, G

    def hessian_sum(self, lam: np.ndarray) -> np.ndarray:
        """sum_k lam_k Phi_k,qq (n, n) for lam (m,)."""
        from .spatial_kernels import quad_hessian
        out = np.empty((self.n, self.n))
        quad_hessian(np.ascontiguousarray(lam, dtype=np.float64), *self.tab[:4], out)
        return out


class SpatialWorkspace(Workspace):
    """A :class:`~multibody.assembly.Workspace` whose ``constraints`` (Phi, Phi_q, Phi_t = 0, gamma = -v^T H v)
    come from the packed :class:`QuadraticTable` in compiled calls: what the singular-crossing monitor and the
    projections evaluate along an energy-momentum run, without the per-group Python evaluation."""

    def __init__(self, model, table: QuadraticTable):
        super().__init__(model)
        self.table = table

    def constraints(self, t, q, v):
        """Phi (m,), A (m, n), Phi_t (m,), gamma (m,) as Workspace.constraints."""
        from .spatial_kernels import quad_gamma
        phi, A = self.table.evaluate(q)
        gamma = np.empty(self.table.m)
        quad_gamma(np.ascontiguousarray(v, dtype=np.float64), *self.table.tab[:4], gamma)
        return phi, A, np.zeros(self.table.m), gamma


def spatial_workspace(model) -> SpatialWorkspace | None:
    """A :class:`SpatialWorkspace` for a supported model, else None (the caller keeps its Workspace)."""
    table = quadratic_table(model)
    return SpatialWorkspace(model, table) if table is not None else None


def quadratic_table(model) -> QuadraticTable | None:
    """The packed table of a supported model, else None (the caller keeps its reference path; also for this run
    when the kernels' cache is cold under the CLI's background policy, :mod:`.spatial_warm`)."""
    if spatial_supported(model) is not None:
        return None
    from .spatial_warm import use_spatial_compiled
    return QuadraticTable(model) if use_spatial_compiled() else None


def constrained_step(table: QuadraticTable, qn, vn, M, force, dt, rows, lam, *, tol, length, max_it, want_cond,
                     previous=None):
    """Newton on paper 004 eq. (10) in one compiled call (em_constrained_kernels.constrained_newton; force = dt grad
    V, length the model's length scale; ``previous`` = (dq_{n-1}, lam_{n-1}) of the last step: its extrapolation is
    the start where its residual is smaller): returns (dq, lam, iterations or -1 when not converged, condition
    number of the last iteration matrix or NaN, whether the extrapolated start was taken). qn, vn, M, force:
    float64, contiguous."""
    from .em_constrained_kernels import constrained_newton
    dq, out, lam = np.empty(table.n), np.empty(3), np.array(lam, dtype=np.float64)
    dq_prev, lam_prev = ((np.zeros(table.n), lam) if previous is None else
                         (np.ascontiguousarray(previous[0], dtype=np.float64),
                          np.ascontiguousarray(previous[1], dtype=np.float64)))
    constrained_newton(qn, vn, M, force, float(dt), np.asarray(rows, dtype=np.int64), lam, dq_prev, lam_prev,
                       previous is not None, table.tab, table.m, float(tol), float(length), int(max_it),
                       bool(want_cond), dq, out)
    return dq, lam, int(out[0]), float(out[1]), bool(out[2])


def independent_rows(A: np.ndarray) -> np.ndarray:
    """pivoted_qr(A).independent_rows (linalg.rank: the rows QR with column pivoting of A^T finds independent, with
    its default rank decision) by one direct LAPACK geqp3 call (:func:`row_pivots`)."""
    perm, rank = row_pivots(A)
    return np.sort(perm[:rank])


def row_pivots(A: np.ndarray) -> tuple[np.ndarray, int]:
    """(perm, rank) of pivoted_qr(A) (linalg.rank: QR with column pivoting of A^T, its default rank decision) by
    one direct LAPACK geqp3 call, the routine scipy.linalg.qr(A.T, pivoting=True) calls, so the same pivots and
    diagonal; without forming Q (the energy-momentum steps need only the pivots, at every step)."""
    m, n = A.shape
    if m == 0 or n > 200 or A.dtype != np.float64:
        qr = pivoted_qr(A)
        return qr.perm, qr.rank
    qr, jpvt, _, _, info = dgeqp3(np.array(A.T, order="F"), lwork=WORK, overwrite_a=1)
    if info != 0:
        qr = pivoted_qr(A)
        return qr.perm, qr.rank
    return jpvt - 1, _rank_from_diag(np.abs(np.diag(qr)[:min(m, n)]), _RANK)
