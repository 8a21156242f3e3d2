"""The sparse path of ``--basis flow`` for large models (issue 12, N-four-bar with 40 cells): the equations of
formulations.nullspace (paper 000 eqs 9-11, 15) with the exact pseudo-inverse of A of full row rank by one sparse LU of
the chart matrix K = [A(x); T^T] per evaluation, T (n, f) the state's basis, instead of the dense smooth
pseudo-inverse.

For A (m, n) of full row rank m = n - f, A^+ g is the solution of A y = g orthogonal to null(A). With Y = K^-1 [0; I]
(spanning null(A), T^T Y = I) and N = Y (Y^T Y)^(-1/2) its orthonormal basis, y' = K^-1 [g; 0] solves A y' = g, and
A^+ g = y' - N N^T y'. Then, as in NullSpace._dynamics:

    x' = T w - A^+ Phi_t,   a_perp = A^+ gamma,   T^T M T z = T^T (f - M a_perp),   x'' = T z + a_perp,
    T' = -A^+ (A' T),   A' T = -(gamma(x' + T) - gamma(x' - T)) / 4 (polarisation, linalg.tangent),   w' = z + T'^T x'.

The dense path's smooth pseudo-inverse (mu = 1e-7 s_1) differs from A^+ by (mu / s)^2 relative in a direction of
singular value s; outside the singular window (formulations.crossing_window) the exact A^+ has the round-off eps / rho^2
<= rtol / 16, and inside it the lagrange equations carry the motion (formulations.nullspace_sparse for the same
argument). After a step, App. A: T <- N of the new x nearest to T (X (X^T X)^(-1/2), X = (I - A^+ A) T, which is N
polar(N^T T) = Y (Y^T Y)^(-1/2); formulations.nullspace_sparse), w <- T_new^T T w.
"""
from __future__ import annotations

import numpy as np

from .base import Accelerations
from .nullspace import NullSpace, NullSpaceEquations
from .nullspace_sparse_book import SparseBook, quiet_init
from .sparse_chart import null_basis, orthonormal


class SparseFlowEquations(NullSpaceEquations):
    """The equations of the module docstring on the state [x, w, vec(T)] (the chart LU, exact A^+, App. A after a step):
    below formulations.crossing_window.CrossingWindow in :class:`SparseFlowNullSpace`'s method order, so that the
    window's dispatch on the layout (lagrange's equations on [q, v] near a crossing) comes first."""

    stage_basis = False     # its stages take the state's T as it is (NullSpaceEquations.error_measure, normal_weight)

    def _dynamics_at(self, t, y):
        """(y', x'', z, lu, f, M) at y = [x, w, vec(T)] (module docstring); the last one is kept."""
        d = self._dyn
        if d is not None and d[0] == t and np.array_equal(d[1], y):
            return d[2]
        m, f = self.ws.m, self.f
        x, w, T = self.unpack(y)
        lu = self._lu(t, x, T)
        N = orthonormal(null_basis(lu, m, f))

        def pinv(g):                    # A^+ g (g (m,) or (m, k)): the solution of K y = [g; 0] without its null part
            pad = np.zeros((f,) + g.shape[1:])
            out = lu.solve(np.concatenate([g, pad]))
            return out - N @ (N.T @ out)

        xdot = T @ w
        if self.entries is None and np.any(Phi_t := self.ws.sparse_constraints(t, x, np.zeros_like(x))[2]):
            xdot = xdot - pinv(Phi_t)
        a_perp = pinv(self._gamma(t, x, xdot))
        z, force, M = self._reduced(t, x, xdot, T, a_perp)
        AT = np.stack([-(self._gamma(t, x, xdot + b) - self._gamma(t, x, xdot - b)) / 4.0 for b in T.T], axis=1)
        Tdot = -pinv(AT)
        out = (np.concatenate([xdot, z + Tdot.T @ xdot, Tdot.ravel()]), T @ z + a_perp, z, lu, force, M)
        self._dyn = (t, y.copy(), out)
        return out

    def split(self, t, y):
        n = self.model.n
        return y[:n], self._dynamics_at(t, y)[0][:n].copy()

    def rhs(self, t, y):
        self.nfev += 1
        return self._dynamics_at(t, y)[0].copy()

    def accelerations(self, t, q, v):
        """x'' and the multipliers: A^T lambda = f - M x'' solved with K^T (formulations.nullspace_sparse)."""
        T = self._last[4]
        _, a, z, lu, force, M = self._dynamics_at(t, np.concatenate([q, T.T @ v, T.ravel()]))
        lam = lu.solve(force - M @ a, trans="T")[: self.ws.m]
        return Accelerations(a, lam, {"rank": self._last[1], "qdd_ind": z, "basis": self.basis})

    def after_step(self, t, y):
        n = self.model.n
        _, w, T = self.unpack(y)
        v = self.split(t, y)[1]
        x = self._project(t, y[:n])                                                      # eqs 12-13
        T_new = self._null(t, x, T)                                                      # App. A
        w = T_new.T @ (T @ w)
        y = np.concatenate([x, w, T_new.ravel()])
        self._book(t, x, self.split(t, y)[1], w, T_new)
        return y

    def _tangent_error(self, t, y, err):
        """NullSpaceEquations._tangent_error with the sparse null basis N: the positions' normal part weighted, T's error
        without its part in the row space (its tangent part N N^T E), w as the physical velocity."""
        n, f = self.model.n, self.f
        out, N = self._positions_error(t, y, err, self.unpack(y)[2])
        E = err[n + f:].reshape(n, f)
        out[n + f:] = (N @ (N.T @ E)).ravel()
        return self._velocity_error(y, err, out)


class SparseFlowNullSpace(SparseBook, NullSpace, SparseFlowEquations):
    """``--formulation nullspace --basis flow`` on the sparse path (module docstring); made by
    formulations.nullspace_sparse.sparse_nullspace for models with one degree of freedom, independent holonomic rows
    and no nonholonomic rows. The state is [x, w, vec(T)] as on the dense path; near a singular configuration the
    singular window of NullSpace (formulations.crossing_window) carries [q, v] by the lagrange equations (sparse, with
    their dense window and crossing step, formulations.lagrange_sparse) while App. A continues T."""

    def __init__(self, model, **options):
        quiet_init(super().__init__, model, basis="flow", **options)
        self._sparse_init(model)

    def current_basis(self):
        return self._last[4]

    def _basis_at(self, t, y):
        return self.unpack(y)[2]

    def initial_state(self, t, q, v):
        T, w = self._sparse_start(t, q, v)
        self._last = (t, self.generic_rank, np.zeros(2), w, T)       # the basis the tracker's first sample reads
        self._book(t, q, v, w, T)
        self.tracker.history = []
        return np.concatenate([q, w, T.ravel()])

    def _window_step(self, t, q, v):
        """App. A at an accepted state inside the window, w = T^T v, the bookkeeping; returns (T, w)."""
        T = self._null(t, q, self._last[4])
        w = T.T @ v
        self._book(t, q, v, w, T)
        return T, w
