"""The bookkeeping both sparse nullspace paths share (formulations.nullspace_sparse: ``--basis continuation``,
formulations.nullspace_flow_sparse: ``--basis flow``; issue 12): the eligibility of a model, the start, the LU of the
chart matrix K = [A(x); T^T], App. A by a sparse solve, the accepted-state bookkeeping with the singular tracker on
sigma_r from the sparse LU (:class:`SparseTracker`), the window's rho, the error filter's tangent part and the output
channels. The mathematics is in the docstring of formulations.nullspace_sparse.
"""
from __future__ import annotations

import warnings

import numpy as np
import scipy.sparse as sp
import scipy.optimize as so
import scipy.sparse.linalg as spla

from ..errors import SimulationError
from ..linalg.rank import NORMAL_ERROR_WEIGHT, pivoted_qr
from .singular import SingularTracker
from .sparse_chart import EntryChart, chart_lu, null_basis, orthonormal, sigma_extremes
from .velocity_error import velocity_change

#: relative precision of sigma_r and sigma_1 at the accepted states (the screen for a local minimum below 0.2 sigma_1 and
#: the singular window's rho, formulations.crossing_window; successive states differ by far more); the golden-section
#: search of the crossing takes them to full precision
SCREEN_TOL = 1e-9
#: time tolerance of the crossing search relative to max(1, |t|) (formulations.singular.golden_min's)
LOCATE_REL = 1e-15


class SparseTracker(SingularTracker):
    """formulations.singular.SingularTracker with sigma_r and sigma_1 of the sparse A (:func:`sigma_extremes`): the same
    accepted-state screen, golden-section search and event."""

    _memo = None        # (t, tol, x, (sigma_r, sigma_1)) of the last call: the window asks twice per accepted state

    def _sigmas(self, t, x, A=None, tol=SCREEN_TOL):
        m = self._memo
        if m is not None and m[0] == t and m[1] == tol and np.array_equal(m[2], x):
            self.values = np.array(m[3][::-1])
            return m[3]
        f = self.form
        A = f.ws.sparse_constraints(t, x, np.zeros_like(x))[1]
        try:
            N = orthonormal(null_basis(chart_lu(A, f.current_basis(), t), A.shape[0], f.f))
            low, big, self.start = sigma_extremes(A, N, getattr(self, "start", None), tol)
        except (SimulationError, spla.ArpackError, RuntimeError):    # K singular or Lanczos not converged: the SVD
            s = np.linalg.svd(A.toarray(), compute_uv=False)
            low, big = s[f.generic_rank - 1], s[0]
        self.values = np.array([big, low])
        self._memo = (t, tol, x.copy(), (low, big))
        return low, big

    def _objective(self, t) -> float:
        return self._sigmas(t, self._position(t), tol=0.0)[0]

    def _minimize(self, a, b) -> float:
        """The time of the smallest sigma_r in [a, b]: Brent's bounded search (golden sections with parabolic steps;
        R. P. Brent, Algorithms for Minimization without Derivatives, 1973, ch. 5) on sigma_r^2, to the golden-section
        search's tolerance 1e-15 max(1, |b|). Why squared: sigma_r is the modulus of a function that changes sign at a
        transversal crossing, so sigma_r^2 is smooth there (a parabola to leading order) and the parabolic steps converge
        superlinearly, where on |t - t*| they do not; every evaluation projects the interpolant (a dense projection next
        to the crossing, ~70 ms at n = 243), and golden sections alone took ~60 per crossing (N-four-bar, 40 cells)."""
        mid = (a + b) / 2
        out = so.minimize_scalar(lambda s: self._objective(mid + s) ** 2, bounds=(a - mid, b - mid), method="bounded",
                                 options={"xatol": LOCATE_REL * max(1.0, abs(b))})
        return float(mid + out.x)



class SparseBook:
    """Mixin (first base) of the sparse nullspace formulations; the class provides ``current_basis()`` (T of the newest
    accepted state) and ``_basis_at(t, y)`` (T of a state y in the formulation's layout)."""

    forced_change = False   # _physical_error lacks the forced velocity change (NullSpaceEquations.forced_change)

    def _sparse_init(self, model) -> None:
        self.dense_note = None
        self.tracker = SparseTracker(self, screen=self.tracker.screen)
        self.mass0 = sp.csr_matrix(model.mass(model.q0)) if model.mass_matrix is not None else None
        self._dyn = None            # (t, T, y, dynamics) of the last evaluation
        self.entries = None         # EntryChart where the workspace is compiled and nothing is prescribed

    def ineligible(self) -> str | None:
        """Why the sparse path does not apply to the model at its start, or None."""
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

    def _sparse_start(self, t, q, v):
        """(T, w) at the start from the dense pivoted QR (eq. 23, once); the rank, f and the compiled entries."""
        pqr = pivoted_qr(self.ws.velocity_constraints(t, q, v)[1], self.rank_tol)
        self.generic_rank, self.f = pqr.rank, self.model.n - pqr.rank
        T = np.ascontiguousarray(pqr.Q[:, pqr.rank:])
        self.fast_rhs = None
        pack = getattr(self.ws, "pack", None)
        self.entries = EntryChart(self.ws, self.f) if pack is not None and not pack.motions else None
        return T, T.T @ v

    def _lu(self, t, x, T):
        """The LU of K = [A(x); T^T] (from the compiled entries where the workspace has them)."""
        if self.entries is not None:
            return self.entries.lu(t, x, T)
        return chart_lu(self.ws.sparse_constraints(t, x, np.zeros_like(x))[1], T, t)

    def _null(self, t, x, T):
        """N (n, f): the orthonormal basis of null(A(x)) nearest to T (App. A: Y = K^-1 [0; I], Y (Y^T Y)^(-1/2))."""
        return orthonormal(null_basis(self._lu(t, x, T), self.ws.m, self.f))

    def _gamma(self, t, x, xdot):
        return self.entries.gamma_at(x, xdot) if self.entries is not None else self.ws.sparse_constraints(t, x, xdot)[3]

    def _mass(self, x):
        return self.mass0 if self.mass0 is not None else self.model.mass(x)

    def _reduced(self, t, x, xdot, B, b):
        """(z, f, M): B^T M B z = B^T (f - M b) (paper 000 eq. 11a; B the basis X or T of the admissible motions)."""
        M, force = self._mass(x), self.ws.forces(t, x, xdot)
        try:
            return np.linalg.solve(B.T @ (M @ B), B.T @ (force - M @ b)), force, M
        except np.linalg.LinAlgError:
            raise SimulationError(f"the reduced mass matrix is not positive definite at t = {t:g}: every admissible "
                                  "motion must carry mass or inertia.") from None

    def _book(self, t, x, v, w, T) -> None:
        """The accepted state's bookkeeping (NullSpaceEquations._accept_basis): the tracker (sigma_r, sigma_1), the rank
        (the dense pivoted QR only where sigma_r / sigma_1 is below the rank tolerance), the jump of w."""
        prev = self._last
        self.tracker.accepted(t, x, v, T)
        low, big = self.tracker.history[-1][4:6]
        rank = self.generic_rank
        if not low > self.rank_tol.rtol * big:
            rank = pivoted_qr(self.ws.velocity_constraints(t, x, np.zeros_like(x))[1], self.rank_tol).rank
        self._last = (t, rank, np.array([big, low]), w.copy(), T.copy())
        if prev is not None and prev[0] != t:
            self._note_jump(t, w, prev[3])
        self._wmax = max(self._wmax, float(np.max(np.abs(w), initial=0.0)))

    def _ratio(self, t, q):
        """sigma_r / sigma_1 at (t, q): the tracker's values of that accepted state, else :func:`sigma_extremes`."""
        h = self.tracker.history
        low, big = (h[-1][4:6] if h and h[-1][0] == t and np.array_equal(h[-1][1], q) else
                    self.tracker._sigmas(t, q))
        return float(low / big) if big > 0 else 1.0

    def _positions_error(self, t, y, err, T):
        """err with its positions' normal part (to A at x) weighted by NORMAL_ERROR_WEIGHT and N (n, f), the null basis
        at x nearest to T (the tangent part N N^T e; NullSpaceEquations._tangent_error)."""
        n = self.model.n
        out = err.copy()
        N = self._null(t, y[:n], T)
        tangent = N @ (N.T @ err[:n])
        out[:n] = tangent + NORMAL_ERROR_WEIGHT * (err[:n] - tangent)
        return out, N

    def _physical_error(self, t, y, err, dq=None):
        """NullSpaceEquations._physical_error (formulations.velocity_error: [dx, dv], dv = T dw + dT (w - dw) or T dw)
        with the tangent parts N N^T dx, N N^T dv from the null basis N of the chart LU: A (holonomic rows only) has
        full row rank on this path, so null(A) = span(N) and (I - A^+ A) = N N^T, without the dense SVD of
        linalg.rank.row_space_filter (O(n^3), 30 ms per step at n = 243). ``flow`` measures the normal parts whole
        (normal_weight 1): no filter at all. dq is always None here (the stages take T as it is: formulations.flow_error)."""
        n, f = self.model.n, self.f
        x, w, T = self.unpack(y)
        dv = velocity_change(T, w, err[n:n + f], err[n + f:].reshape(n, f) if self.basis != "continuation" else None)
        out = np.concatenate([err[:n], dv])
        weight = self.normal_weight
        if weight == 1.0:
            return out
        N = self._null(t, x, T)
        qv = out.reshape(2, n).T
        tangent = N @ (N.T @ qv)
        return (tangent + weight * (qv - tangent)).T.ravel()

    def channels(self, t, y):
        """As NullSpaceEquations.channels, but the QR is not formed: ``R_diag`` holds sigma_r in place of |R_rr| (both
        vanish at a singular configuration; r_g - 1 is the column the R-diagonal figure draws bold) and NaN elsewhere,
        ``R_min`` sigma_r, ``sigma`` (sigma_1, sigma_r)."""
        if self._windowed(y):
            y = self._layout(t, *self.split(t, y))
        n, f, r, names = self.model.n, self.f, self.generic_rank, self.model.coordinate_names
        T, sig = self._basis_at(t, y), self._last[2]
        diag = np.full(self.ws.m, np.nan)
        diag[r - 1] = sig[1]
        return {"rank": ([self._last[1]], ("rank",)), "sigma": (sig, ("sigma_1", "sigma_r")),
                "R_diag": (diag, tuple(f"R{i + 1}{i + 1}" for i in range(len(diag)))), "R_min": ([sig[1]], ("sigma_r",)),
                "qd_ind": (y[n:n + f], tuple(f"qd{j + 1}" for j in range(f))),
                "T": (T.ravel(), tuple(f"{names[i]}/T{j + 1}" for i in range(len(names)) for j in range(f)))}

    def summary(self):
        return {**super().summary(), "linear_algebra": "sparse (SuperLU of the chart matrix [A; T^T]; basis by App. A "
                                                      "from sparse solves, sigma_r by Lanczos)"}


def quiet_init(init, *args, **kwargs) -> None:
    """init(*args, **kwargs) without the dense path's O(n^3) RuntimeWarning (formulations.nullspace._dense_note)."""
    with warnings.catch_warnings():
        warnings.simplefilter("ignore", RuntimeWarning)
        init(*args, **kwargs)
