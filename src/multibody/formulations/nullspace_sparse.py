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

import warnings

import numpy as np
import scipy.sparse as sp
import scipy.sparse.linalg as spla

from ..errors import MultibodyError, SimulationError
from ..linalg.rank import NORMAL_ERROR_WEIGHT, pivoted_qr
from .base import Accelerations
from .nullspace_continuation import Chart, ContinuationNullSpace, nullspace as dense_nullspace
from .singular import SingularTracker
from .sparse_chart import EntryChart, chart_lu, null_basis, orthonormal, sigma_extremes

#: relative precision of sigma_r and sigma_1 at the accepted states (the screen for a local minimum below 0.2 sigma_1 and
#: the singular window's rho, formulations.crossing_window; successive states differ by far more); the golden-section
#: search of the crossing takes them to full precision
SCREEN_TOL = 1e-9


class SparseTracker(SingularTracker):
    """formulations.singular.SingularTracker with sigma_r and sigma_1 of the sparse A (:func:`sigma_extremes`): the same
    accepted-state screen, golden-section search and event."""

    def _sigmas(self, t, x, A=None, tol=SCREEN_TOL):
        f = self.form
        A = f.ws.sparse_constraints(t, x, np.zeros_like(x))[1]
        try:
            N = orthonormal(null_basis(chart_lu(A, f._chart.T, t), A.shape[0], f.f))
            low, big, self.start = sigma_extremes(A, N, getattr(self, "start", None), tol)
        except (SimulationError, spla.ArpackError, RuntimeError):    # K singular or Lanczos not converged: the SVD
            s = np.linalg.svd(A.toarray(), compute_uv=False)
            low, big = s[f.generic_rank - 1], s[0]
        self.values = np.array([big, low])
        return low, big

    def _objective(self, t) -> float:
        return self._sigmas(t, self._position(t), tol=0.0)[0]


class SparseContinuationNullSpace(ContinuationNullSpace):
    """``--formulation nullspace`` (basis continuation) on the sparse path (module docstring); made by
    :func:`sparse_nullspace` for models with one degree of freedom, independent holonomic rows at the start and no
    nonholonomic rows. The state is [x, w] in the chart T_k; the charts hold T only (Q1 and Omega are not formed)."""

    def __init__(self, model, **options):
        with warnings.catch_warnings():         # the dense path's O(n^3) note does not apply here
            warnings.simplefilter("ignore", RuntimeWarning)
            super().__init__(model, **options)
        self.dense_note = None
        self.tracker = SparseTracker(self, screen=self.tracker.screen)
        self.mass0 = sp.csr_matrix(model.mass(model.q0)) if model.mass_matrix is not None else None
        self._dyn = None            # (t, T, y, dynamics) of the last evaluation
        self.entries = None         # EntryChart where the workspace is compiled and nothing is prescribed

    def ineligible(self) -> str | None:
        """Why this path does not apply to the model at its start, or None."""
        ws, model = self.ws, self.model
        if ws.h or not ws.m:
            return "nonholonomic rows or no constraints"
        A = ws.velocity_constraints(0.0, model.q0, np.zeros(model.n))[1]
        rank = pivoted_qr(A, self.rank_tol).rank
        if rank != ws.m:
            return f"{ws.m - rank} redundant constraint rows at the start"
        if model.n - rank != 1:
            return f"{model.n - rank} degrees of freedom (the sparse basis continuation serves one)"
        return None

    # ------------------------------------------------------------------ state and equations
    def initial_state(self, t, q, v):
        A = self.ws.velocity_constraints(t, q, v)[1]
        pqr = pivoted_qr(A, self.rank_tol)
        self.generic_rank, self.f = pqr.rank, self.model.n - pqr.rank
        T = np.ascontiguousarray(pqr.Q[:, pqr.rank:])
        w = T.T @ v
        self._charts = [Chart(t, None, T, None)]
        self.fast_rhs = None
        pack = getattr(self.ws, "pack", None)
        self.entries = EntryChart(self.ws, self.f) if pack is not None and not pack.motions else None
        self._last = (t, pqr.rank, np.array(self.tracker._sigmas(t, q)[::-1]), w.copy(), T.copy())
        return np.concatenate([q, w])

    def continued_basis(self, t) -> np.ndarray:
        """T of the step containing t (the basis is carried by App. A at the accepted states, module docstring)."""
        return self._chart_at(t).T

    def _dynamics_at(self, t, y, T):
        """(x', x'', w', X, lu, f, M) at y = [x, w] in the chart T (module docstring); the last one is kept."""
        d = self._dyn
        if d is not None and d[0] == t and d[1] is T and np.array_equal(d[2], y):
            return d[3]
        n, m = self.model.n, self.ws.m
        x, w = y[:n], y[n:]
        if self.entries is not None:        # compiled entries, no prescribed motions (Phi_t = 0)
            lu = self.entries.lu(t, x, T)
            xdot = null_basis(lu, m, self.f) @ w
            gamma = self.entries.gamma_at(x, xdot)
        else:
            _, A, Phi_t, _ = self.ws.sparse_constraints(t, x, np.zeros(n))
            lu = chart_lu(A, T, t)
            xdot = null_basis(lu, m, self.f) @ w
            if np.any(Phi_t):
                xdot = xdot - lu.solve(np.r_[Phi_t, np.zeros(self.f)])
            gamma = self.ws.sparse_constraints(t, x, xdot)[3]
        X = null_basis(lu, m, self.f)
        b = lu.solve(np.r_[gamma, np.zeros(self.f)])
        M = self.mass0 if self.mass0 is not None else self.model.mass(x)
        force = self.ws.forces(t, x, xdot)
        MX = M @ X
        try:
            z = np.linalg.solve(X.T @ MX, X.T @ (force - M @ b))
        except np.linalg.LinAlgError:
            raise SimulationError(f"X^T M X is not positive definite at t = {t:g}: every admissible motion must "
                                  "carry mass or inertia.") from None
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

    # ------------------------------------------------------------------ after each accepted step
    def _transport(self, t, x, T_old):
        """T_{k+1} at x: Y = K^-1 [0; I] with K = [A(x); T_k^T], Y (Y^T Y)^(-1/2) (App. A, module docstring)."""
        A = self.ws.sparse_constraints(t, x, np.zeros_like(x))[1]
        return orthonormal(null_basis(chart_lu(A, T_old, t), self.ws.m, self.f))

    def after_step(self, t, y):
        n, old = self.model.n, self._chart
        v = self.split(t, y)[1]
        x = self._project(t, y[:n])                                                      # eqs 12-13
        w = self._advance_chart(t, x, v, old)
        return np.concatenate([x, w])

    def _advance_chart(self, t, x, v, old):
        """The chart at the accepted state (t, x) with velocity v: T by App. A from the old chart, w = T^T v; the
        tracker and the bookkeeping of NullSpaceEquations._accept_basis; returns w."""
        T = self._transport(t, x, old.T)
        w = T.T @ v
        self._charts = self._charts[-2:] + [Chart(t, None, T, None)]
        v = self.split(t, np.concatenate([x, w]))[1]
        prev = self._last
        self.tracker.accepted(t, x, v, T)
        low, big = self.tracker.history[-1][4:6]
        rank = self.generic_rank if low > self.rank_tol.rtol * big else self._dense_rank(t, x)
        self._last = (t, rank, np.array([big, low]), w.copy(), T.copy())
        self._note_jump(t, w, prev[3])
        self._wmax = max(self._wmax, float(np.max(np.abs(w), initial=0.0)))
        return w

    def _dense_rank(self, t, x) -> int:
        """The rank decided by the dense pivoted QR (eq. 23), where sigma_r / sigma_1 is below its tolerance."""
        return pivoted_qr(self.ws.velocity_constraints(t, x, np.zeros_like(x))[1], self.rank_tol).rank

    def _window_step(self, t, q, v):
        return self._advance_chart(t, q, v, self._chart)

    def _ratio(self, t, q):
        """sigma_r / sigma_1 at (t, q): the tracker's values of that accepted state, else :func:`sigma_extremes`."""
        h = self.tracker.history
        low, big = (h[-1][4:6] if h and h[-1][0] == t and np.array_equal(h[-1][1], q) else
                    self.tracker._sigmas(t, q))
        return float(low / big) if big > 0 else 1.0

    def _position_error(self, t, y, err):
        """The local error as ContinuationEquations._position_error: the normal part of x weighted by NORMAL_ERROR_WEIGHT,
        the tangent part N N^T e from the unit null basis N of A at x (one solve with K), w as the physical velocity."""
        n = self.model.n
        out = err.copy()
        A = self.ws.sparse_constraints(t, y[:n], np.zeros(n))[1]
        N = orthonormal(null_basis(chart_lu(A, self._chart_at(t).T, t), self.ws.m, self.f))
        tangent = N @ (N.T @ err[:n])
        out[:n] = tangent + NORMAL_ERROR_WEIGHT * (err[:n] - tangent)
        return self._velocity_error(y, err, out)

    # ------------------------------------------------------------------ output
    def channels(self, t, y):
        _, rank, sig, w, _ = self._last
        T = self._chart_at(t).T
        names = self.model.coordinate_names
        return {"rank": ([rank], ("rank",)), "sigma": (sig, ("sigma_1", "sigma_r")),
                "qd_ind": (y[self.model.n:], tuple(f"qd{j + 1}" for j in range(self.f))),
                "T": (T.ravel(), tuple(f"{names[i]}/T{j + 1}" for i in range(len(names)) for j in range(self.f)))}

    def summary(self):
        return {**super().summary(), "linear_algebra": "sparse (SuperLU of the chart matrix [A; T^T]; basis by App. A "
                                                      "from sparse solves, sigma_r by Lanczos)"}


def nullspace(model, *, basis: str = "continuation", sparse: bool | None = None, **options):
    """``--formulation nullspace``: with ``basis`` continuation on large models with one degree of freedom the sparse
    path of this module (``sparse`` as lagrange's option: None automatic, True required, False dense), else the dense
    formulations of formulations.nullspace_continuation.nullspace (``continuation``, ``flow`` or ``recompute``)."""
    if basis == "continuation":
        return sparse_nullspace(model, sparse, **options) or dense_nullspace(model, **options)
    if sparse:
        raise MultibodyError(f"Model '{model.name}': the sparse nullspace path serves --basis continuation only; use "
                             "sparse=False.")
    return dense_nullspace(model, basis=basis, **options)


def sparse_nullspace(model, sparse: bool | None, **options):
    """The continued-basis nullspace formulation on the sparse path where ``sparse`` asks for it (None: automatic, like
    lagrange's, for n >= assembly.SPARSE_MIN_COORDINATES) and the model allows it (one degree of freedom,
    independent holonomic rows); None where the dense path runs. sparse=True on a model it does not serve: a clear
    MultibodyError."""
    from ..assembly import SPARSE_MIN_COORDINATES
    if sparse is False or (sparse is None and model.n < SPARSE_MIN_COORDINATES):
        return None
    form = SparseContinuationNullSpace(model, **options)
    reason = form.ineligible()
    if reason is None:
        return form
    if sparse:
        raise MultibodyError(f"Model '{model.name}': the sparse nullspace path does not handle {reason}; use "
                             "sparse=False.")
    return None
