"""The sparse path of ``--basis continuation`` for large models (issue 12, N-four-bar with 40 cells): the chart
equations and the continuation of the tangent basis by sparse solves with the square chart matrix

    K = [A(x); T_k^T]   (n, n),

where A (m, n) has full row rank m = r_g away from singular configurations and T_k (n, f) is the step's tangent
basis, instead of the dense pivoted QR, Omega (n, n) and the dense SVDs of the singular tracker (O(n^3) per step).

The chart equations are those of :mod:`.nullspace_continuation`, written without Q1. With Q_k = [Q1_k | T_k]
orthogonal, span(Q1_k) = {y : T_k^T y = 0}, and G = A Q1_k square (m = r_g): y = Q1_k G^-1 c is the solution of
K y = [c; 0]. Hence (paper 000 eqs 9-11)

    X = T_k - Q1_k G^-1 A T_k  solves  K X = [0; I],     x' = X w - K^-1 [Phi_t; 0],     b = Q1_k G^-1 gamma = K^-1 [gamma; 0],
    X^T M X w' = X^T (f - M b),     x'' = X w' + b,

the same motion and the same w = T_k^T x' (T_k^T X = I). The dense path uses the smooth pseudo-inverse G_mu^+
(mu = 1e-7 s_1, nullspace.NULLSPACE_REGULARIZATION) to cap the round-off eps / rho^2 near a singular
configuration; here G^-1 is exact, because outside the singular window (formulations.crossing_window) rho =
sigma_r / sigma_1 >= 4 sqrt(eps / rtol) bounds that round-off by rtol / 16, and inside it the lagrange equations carry
the motion. The two paths differ by the regularisation, (mu / s)^2 relative in a direction of singular value s.

The basis (paper 000 App. A; eq. 22). After an accepted step, Y = K^-1 [0; I] with A = A(x_{k+1}) spans null(A) with
T_k^T Y = I, and T_{k+1} = Y (Y^T Y)^(-1/2). With N an orthonormal basis of null(A) and C = N^T T_k: Y = N C^-T, so
T_{k+1} = N polar(C^-T) = N polar(C) = X (X^T X)^(-1/2) for X = (I - Q1_ns Q1_ns^T) T_k: App. A applied to T_k. The dense
path applies App. A to eq. 22's prediction T_c = (Q_k expm(Omega_k h))[:, r:] instead; for a one-dimensional tangent
space (f = 1, the N-four-bar chains) both are the unit vector of the line null(A) on the side of the previous basis,
identical to round-off (tests/test_nullspace_sparse.py), so this path serves f = 1 only (for f > 1 the two rotate
the basis within the tangent space differently, O(h^3) per step).

The singular tracker (:class:`SparseTracker`) takes sigma_r = sigma_min(A) from K = [A; s N^T] (N the unit null vector
at x, s >= sigma_1): its singular values are those of A and s, and sigma_min(K) follows by Lanczos on (K^T K)^-1
(two sparse triangular solves per product; Golub & Van Loan, Matrix Computations, 4th ed., Sect. 10.1), with the
backward error of the LU (absolute eps sigma_1, as the dense SVD), not the squared eps sigma_1^2 / sigma_r of
A A^T; sigma_1 by Lanczos on A A^T (formulations.sparse_chart). The crossing search and event are those of formulations.singular (the event at
t* from the dense QR, once per crossing).
"""
from __future__ import annotations

import numpy as np

from ..errors import MultibodyError
from .base import Accelerations
from .nullspace_continuation import Chart, ContinuationEquations, ContinuationNullSpace, nullspace as dense_nullspace
from .nullspace_flow_sparse import SparseFlowNullSpace
from .nullspace_sparse_book import SparseBook, quiet_init
from .sparse_chart import null_basis


class SparseChartEquations(ContinuationEquations):
    """The chart equations of the module docstring on the state [x, w] (the chart LU, App. A after a step): below
    formulations.crossing_window.CrossingWindow in :class:`SparseContinuationNullSpace`'s method order, so that the
    window's dispatch on the layout (lagrange's equations on [q, v] near a crossing) comes first."""

    def _dynamics_at(self, t, y, T):
        """(x', x'', w', X, lu, f, M) at y = [x, w] in the chart T (module docstring); the last one is kept."""
        d = self._dyn
        if d is not None and d[0] == t and d[1] is T and np.array_equal(d[2], y):
            return d[3]
        n, m = self.model.n, self.ws.m
        x, w = y[:n], y[n:]
        lu = self._lu(t, x, T)
        X = null_basis(lu, m, self.f)
        xdot = X @ w
        if self.entries is None and np.any(Phi_t := self.ws.sparse_constraints(t, x, np.zeros(n))[2]):
            xdot = xdot - lu.solve(np.r_[Phi_t, np.zeros(self.f)])
        b = lu.solve(np.r_[self._gamma(t, x, xdot), np.zeros(self.f)])
        z, force, M = self._reduced(t, x, xdot, X, b)
        out = (xdot, X @ z + b, z, X, lu, force, M)
        self._dyn = (t, T, y.copy(), out)
        return out

    def split(self, t, y):
        n = self.model.n
        return y[:n], self._dynamics_at(t, y, self._chart_at(t).T)[0].copy()

    def rhs(self, t, y):
        self.nfev += 1
        xdot, _, z, *_ = self._dynamics_at(t, y, self._chart_at(t).T)
        return np.concatenate([xdot, z])

    def accelerations(self, t, q, v):
        """x'' and the multipliers: A^T lambda = f - M x'' solved with K^T (its last f components vanish: f - M x'' is
        normal to the admissible motions X)."""
        T = self._chart_at(t).T
        _, a, z, _, lu, force, M = self._dynamics_at(t, np.concatenate([q, T.T @ v]), T)
        lam = lu.solve(force - M @ a, trans="T")[: self.ws.m]
        return Accelerations(a, lam, {"rank": self._last[1], "qdd_ind": z, "basis": self.basis})

    def _transport(self, t, x, T_old):
        """T_{k+1} at x: Y = K^-1 [0; I] with K = [A(x); T_k^T], Y (Y^T Y)^(-1/2) (App. A, module docstring)."""
        return self._null(t, x, T_old)

    def after_step(self, t, y):
        n, old = self.model.n, self._chart
        v = self.split(t, y)[1]
        x = self._project(t, y[:n])                                                      # eqs 12-13
        return np.concatenate([x, self._advance_chart(t, x, v, old)])

    def _advance_chart(self, t, x, v, old):
        """The chart at the accepted state (t, x) with velocity v: T by App. A from the old chart, w = T^T v, the
        bookkeeping (SparseBook._book); returns w."""
        T = self._transport(t, x, old.T)
        w = T.T @ v
        self._charts = self._charts[-2:] + [Chart(t, None, T, None)]
        self._book(t, x, self.split(t, np.concatenate([x, w]))[1], w, T)
        return w


class SparseContinuationNullSpace(SparseBook, ContinuationNullSpace, SparseChartEquations):
    """``--formulation nullspace`` (basis continuation) on the sparse path (module docstring); made by
    :func:`sparse_nullspace` for models with one degree of freedom, independent holonomic rows at the start and no
    nonholonomic rows. The state is [x, w] in the chart T_k; the charts hold T only (Q1 and Omega are not formed)."""

    def __init__(self, model, **options):
        quiet_init(super().__init__, model, **options)
        self._sparse_init(model)

    def current_basis(self):
        return self._chart.T

    def _basis_at(self, t, y):
        return self._chart_at(t).T

    def initial_state(self, t, q, v):
        T, w = self._sparse_start(t, q, v)
        self._charts = [Chart(t, None, T, None)]
        self._last = None
        self._book(t, q, v, w, T)
        self.tracker.history = []
        return np.concatenate([q, w])

    def continued_basis(self, t) -> np.ndarray:
        """T of the step containing t (the basis is carried by App. A at the accepted states, module docstring)."""
        return self._chart_at(t).T

    def _window_step(self, t, q, v):
        return self._advance_chart(t, q, v, self._chart)

    def _position_error(self, t, y, err):
        """ContinuationEquations._position_error with the tangent part from the sparse null basis
        (SparseBook._positions_error); w as the physical velocity."""
        return self._velocity_error(y, err, self._positions_error(t, y, err, self._chart_at(t).T)[0])


def nullspace(model, *, basis: str = "continuation", sparse: bool | None = None, **options):
    """``--formulation nullspace``: on large models with one degree of freedom the sparse path (``continuation``: this
    module, ``flow``: formulations.nullspace_flow_sparse; ``sparse`` as lagrange's option: None automatic, True required,
    False dense), else the dense formulations of formulations.nullspace_continuation.nullspace (``continuation``,
    ``flow`` or ``recompute``)."""
    if basis in ("continuation", "flow"):
        form = sparse_nullspace(model, sparse, basis, **options)
        if form is not None:
            return form
    elif sparse:
        raise MultibodyError(f"Model '{model.name}': the sparse nullspace path serves --basis continuation and flow; "
                             "use sparse=False.")
    return dense_nullspace(model, basis=basis, **options)


def sparse_nullspace(model, sparse: bool | None, basis: str = "continuation", **options):
    """The nullspace formulation with ``basis`` on the sparse path where ``sparse`` asks for it (None: automatic, like
    lagrange's, for n >= assembly.SPARSE_MIN_COORDINATES) and the model allows it (one degree of freedom,
    independent holonomic rows); None where the dense path runs. sparse=True on a model it does not serve: a clear
    MultibodyError."""
    from ..assembly import SPARSE_MIN_COORDINATES
    if sparse is False or (sparse is None and model.n < SPARSE_MIN_COORDINATES):
        return None
    form = (SparseContinuationNullSpace if basis == "continuation" else SparseFlowNullSpace)(model, **options)
    reason = form.ineligible()
    if reason is None:
        return form
    if sparse:
        raise MultibodyError(f"Model '{model.name}': the sparse nullspace path does not handle {reason}; use "
                             "sparse=False.")
    return None
