"""``--basis continuation``: the null-space formulation with the paper's discrete continuation of the tangent
basis (paper 000 eqs 9-13, 19-22 and App. A), next to the integrated flow of :mod:`.nullspace` (``flow``).

ODE state y = [x (n), w (f)]; within the step from t_k the basis Q_k = [Q1_k | T_k] is frozen and, as in
eq. 12 (x = Q2_k q + Q1_k p, p from Phi(x) = 0, eq. 13), the velocity is written in it:

    x' = T_k w + Q1_k p',   A (T_k w + Q1_k p') + Phi_t = 0   ->   x' = X w - Q1_k G^+ Phi_t,
    X = T_k - Q1_k G^+ A T_k (n, f),  G = A Q1_k (m, r)                                (eqs 9, 11b)
    x'' = X w' + Q1_k G^+ gamma   (A x'' = gamma; X' w lies in span(Q1_k))                 (eq. 10)
    X^T M X w' = X^T (f - M Q1_k G^+ gamma)   (A X = 0: the reactions cancel)            (eq. 11a)

so the motion is the exact one whatever the basis (x'' satisfies A x'' = gamma and X^T (M x'' - f) = 0,
eq. 3) and only the generalized velocities w depend on it. G^+ is the smooth pseudo-inverse of
:class:`~multibody.linalg.tangent.SmoothPinv` (no rank decision inside a step, as in :mod:`.nullspace`).

After every accepted step t_k -> t_{k+1} = t_k + h:
1. x is projected onto Phi = 0 (eqs 12-13, minimum-norm Gauss-Newton);
2. the pivoted QR of A_{k+1}^T gives the new Q1_ns (eq. 23) and the rank;
3. eq. 22: T_{k+1} = (Q_k expm(Omega_k h))[:, r:] with Omega_k of eqs 19-20 at t_k
   (:func:`~multibody.linalg.tangent.omega_continued`), re-orthogonalised against the new Q1_ns by App. A
   (:func:`~multibody.linalg.tangent.continue_basis`); the integrated Q1 block is discarded (Sect. 2.4);
4. w <- T_{k+1}^T x' (x' tangent at x_{k+1}: the same physical velocity), Omega_{k+1} from A' [Q1 | T]
   (a central difference of A along x', :meth:`ContinuationNullSpace._omega`).

The measure (12hb, derived as flow's in formulations.velocity_error). The velocity of y = [x, w] is X(x) w (plus
-Q1_k G^+ Phi_t), and A(x) X(x) = 0 at every x, so an error [dx, dw] moves it by X dw + X_x[dx] w = X dw - A^+ A'(v) dx
(A X = 0 differentiated; X_x[dx] lies in span(Q1_k), where Q1_k G^+ acts as A^+). The after-step action (x onto
Phi = 0; v <- T_new T_new^T v = P_t v at the projected x) removes the normal part dx_n of dx and adds A^+ A'(v) dx_n
back, so the continued motion moves by (P_t dx, X dw - A^+ A'(v) P_t dx): flow's measure with K = 0. So the chart's
measure (NullSpaceEquations._physical_error) counts the forced velocity change -A^+ A'(v) P_t dx whole
(velocity_error.turn_velocity_change, v = T_k w as the compiled kernel), the normal parts at NORMAL_ERROR_WEIGHT,
and T_k dw for X dw (they differ in span(Q1_k) by O(h): weighted). Without the forced change the estimate did not
bound the error (benchmarks/flow_local_error.py with continuation, double four-bar dopri5 rtol = atol = 1e-5: true /
estimate largest 1.19, 0.76 with it); tests/test_nullspace_continuation.py: the remainder of the continued motion is
of second order with it, of first order without.

The dense output of a step is read in the chart of that step (``split`` keeps the charts of the last three
steps). Singular events and diagnostics are those of ``formulations.nullspace.NullSpace``.
"""
from __future__ import annotations

from dataclasses import dataclass

import numpy as np
import scipy.linalg as sla

from ..errors import SimulationError
from ..linalg.rank import min_norm_solve, pivoted_qr
from ..linalg.tangent import SmoothPinv, continue_basis, continue_expm, omega_continued
from ..fast.nullspace import fast_nullspace_rhs
from .base import Accelerations
from .crossing_window import CrossingWindow, TrackedRatio
from .nullspace import PFAFFIAN_RATE_STEP, NullSpace, NullSpaceEquations


@dataclass(frozen=True)
class Chart:
    """The frozen basis of one step: from time t, Q1 (n, r) of the fresh QR, T (n, f) continued, Omega (n, n)."""

    t: float
    Q1: np.ndarray
    T: np.ndarray
    Omega: np.ndarray


class ContinuationEquations(NullSpaceEquations):
    """The continued-chart equations (module docstring); :class:`ContinuationNullSpace` adds the singular window."""

    def __init__(self, model, **options):
        super().__init__(model, basis="flow", **options)
        self.basis = "continuation"
        self._charts: list[Chart] = []     # the charts of the last three steps (the newest last)
        self._memo = None                  # (t, Q1, T, y, x', compiled dynamics or None) of the last _xdot

    # ------------------------------------------------------------------ state layout
    def initial_state(self, t, q, v):
        A = self.ws.velocity_constraints(t, q, v)[1]
        pqr = pivoted_qr(A, self.rank_tol)
        r, n = pqr.rank, self.model.n
        self.generic_rank, self.f = r, n - r
        Q1, T = pqr.Q[:, :r], pqr.Q[:, r:]
        w = T.T @ v
        self._charts = [Chart(t, Q1, T, self._omega(t, q, v, pqr, Q1, T))]
        self._store(t, pqr, w, T)
        self.fast_rhs = fast_nullspace_rhs(self, continuation=True)
        return np.concatenate([q, w])

    def unpack(self, y):
        """(x (n,), w (f,), T (n, f)): T is the basis of the current step's chart."""
        n = self.model.n
        return y[:n], y[n:], self._chart.T

    @property
    def _chart(self) -> Chart:
        return self._charts[-1]

    def _chart_at(self, t) -> Chart:
        """The chart of the step containing t: the newest one from t on, an older one before it."""
        newest = self._charts[-1]
        if newest.t <= t:               # the stages of the current step: no search
            return newest
        return next((c for c in reversed(self._charts) if c.t <= t), self._charts[0])

    def continued_basis(self, t) -> np.ndarray:
        """T(t) (n, f): the basis of the step containing t carried to t by eq. 22,
        (Q_k expm(Omega_k (t - t_k)))[:, r:] (the continuing motion at a singular configuration from the
        continued basis, N3)."""
        c = self._chart_at(t)
        return continue_expm(np.hstack([c.Q1, c.T]), c.Omega, t - c.t)[:, c.Q1.shape[1]:]

    def split(self, t, y):
        n = self.model.n
        return y[:n], self._xdot(t, y, self._chart_at(t))

    def _xdot(self, t, y, chart):
        """x' (n,) of y = [x, w] in ``chart`` (eq. 11b; compiled where the model allows). The last evaluation is
        kept (the step watch, the crossing monitor and the recorder ask for the same state in turn); it depends on
        the chart's Q1 and T only (not on Omega)."""
        memo = self._memo
        if memo is not None and memo[0] == t and memo[1] is chart.Q1 and memo[2] is chart.T \
                and np.array_equal(memo[3], y):
            return memo[4].copy()
        n = self.model.n
        out = self.fast_rhs.dynamics(t, y, chart) if self.fast_rhs is not None else None
        xdot = out[0][:n] if out is not None else self._kinematics(t, y[:n], y[n:], chart)[0]
        self._memo = (t, chart.Q1, chart.T, y.copy(), xdot.copy(), out)
        return xdot

    def _kinematics(self, t, x, w, chart):
        """x' (n,), X (n, f), A (m, n) and G^+ (the SmoothPinv of G = A Q1) at (t, x) in the chart (eqs 9, 11b)."""
        _, A, Phi_t, _ = self.ws.velocity_constraints(t, x, np.zeros_like(x))
        Q1, T = chart.Q1, chart.T
        Gp = SmoothPinv.of(A @ Q1, self.reg)
        X = T - Q1 @ (Gp @ (A @ T)) if T.shape[1] else T
        xdot = X @ w - Q1 @ (Gp @ Phi_t)
        return xdot, X, A, Gp

    # ------------------------------------------------------------------ dynamics
    def _chart_dynamics(self, t, x, w, chart):
        """x', x'' and w' at a state (eqs 10, 11a in the chart)."""
        xdot, X, A, Gp = self._kinematics(t, x, w, chart)
        gamma = self.ws.velocity_constraints(t, x, xdot)[3]
        M, f = self.model.mass(x), self.ws.forces(t, x, xdot)
        b = chart.Q1 @ (Gp @ gamma)
        try:
            z = sla.solve(X.T @ M @ X, X.T @ (f - M @ b), assume_a="pos", check_finite=False)
        except (sla.LinAlgError, ValueError) as exc:
            raise SimulationError(f"X^T M X is not positive definite at t = {t:g} ({exc}): every "
                                  "admissible motion must carry mass or inertia.") from None
        return xdot, X @ z + b, z, A, M, f

    def rhs(self, t, y):
        self.nfev += 1
        n = self.model.n
        # the chart of the step containing t: a stepper's dense output may evaluate stages of a step after its
        # after_step (dop853's extra stages), in that step's chart
        chart = self._chart_at(t)
        memo = self._memo       # the state after_step evaluated last (the stepper's first stage after it)
        if memo is not None and memo[5] is not None and memo[0] == t and memo[1] is chart.Q1 \
                and memo[2] is chart.T and np.array_equal(memo[3], y):
            self.fast_rhs.paths[memo[5][2]] += 1
            return memo[5][0].copy()
        out = self.fast_rhs(t, y, chart) if self.fast_rhs is not None else None
        if out is not None:         # compiled: the same numbers up to round-off (tests/test_fast_nullspace.py)
            return out[0]
        xdot, _, z, *_ = self._chart_dynamics(t, y[:n], y[n:], chart)
        return np.concatenate([xdot, z])

    def accelerations(self, t, q, v):
        chart = self._chart_at(t)
        out = self._fast_accelerations(t, q, v, chart) if self.fast_rhs is not None else None
        if out is not None:
            return out
        _, X, _, Gp = self._kinematics(t, q, np.zeros(self.f), chart)
        Phi_t = self.ws.velocity_constraints(t, q, v)[2]
        w = np.linalg.lstsq(X, v + chart.Q1 @ (Gp @ Phi_t), rcond=None)[0] if self.f else np.zeros(0)
        _, a, z, A, M, f = self._chart_dynamics(t, q, w, chart)
        lam = min_norm_solve(A.T, f - M @ a)
        return Accelerations(a, lam, {"rank": self._last[1], "qdd_ind": z, "basis": self.basis})

    def _fast_accelerations(self, t, q, v, chart):
        """:meth:`accelerations` by the compiled kernel (the same formulas: w the least-squares solution of
        X w = v - x'(w = 0), then x'' and w' at (q, w)), or None."""
        n, memo = self.model.n, self._memo
        if memo is not None and memo[5] is not None and memo[0] == t and memo[1] is chart.Q1 and memo[2] is chart.T \
                and np.array_equal(memo[3][:n], q) and np.array_equal(memo[4], v):
            out = memo[5]       # v is x' of the state split last: its w and dynamics are known
        else:
            zero = self.fast_rhs.dynamics(t, np.concatenate([q, np.zeros(self.f)]), chart)
            if zero is None:
                return None
            X = zero[3]         # full column rank (T^T X = I): the least-squares w from the normal equations
            w = np.linalg.solve(X.T @ X, X.T @ (v - zero[0][:n]))
            out = self.fast_rhs.dynamics(t, np.concatenate([q, w]), chart)
        if out is None:
            return None
        A = self.ws.constraints(t, q, v)[1]
        lam = self._multipliers(A, self.ws.forces(t, q, v) - self.model.mass(q) @ out[1])
        return Accelerations(out[1], lam, {"rank": self._last[1], "qdd_ind": out[0][n:], "basis": self.basis})

    # ------------------------------------------------------------------ after each accepted step
    def after_step(self, t, y):
        n, old = self.model.n, self._chart
        x, w = y[:n], y[n:]
        v = self._xdot(t, y, old)
        x = self._project(t, x)                                                          # eqs 12-13
        A = self.ws.velocity_constraints(t, x, v)[1]
        pqr = self._qr(A)
        r = self.generic_rank
        Q1 = pqr.Q[:, :r]
        T = self._continue_basis(old, t - old.t, Q1) if self.f else old.T                    # eq. 22, App. A
        w = T.T @ v
        v = self._xdot(t, np.concatenate([x, w]), Chart(t, Q1, T, old.Omega))
        self._charts = self._charts[-2:] + [Chart(t, Q1, T, self._omega(t, x, v, pqr, Q1, T))]
        self._accept_basis(t, x, v, pqr, w, T, A)
        return np.concatenate([x, w])

    def _continue_basis(self, old, h, Q1):
        """T_{k+1} from the chart ``old`` over h (eq. 22, App. A; compiled where the model allows)."""
        if self.fast_rhs is not None:
            return self.fast_rhs.continue_basis(old, h, Q1)
        return continue_basis(old.Q1, old.T, old.Omega, h, Q1)

    def _omega(self, t, x, v, pqr, Q1, T):
        """Omega (n, n) at (t, x, x') for Q = [Q1 | T] (eqs 19-20); zero without constraints or freedom. A' Q by a
        central difference of C along (x', 1) with step PFAFFIAN_RATE_STEP / max(|x'|, 1) (relative error ~1e-10,
        two evaluations of C instead of 2 n of gamma; Omega only carries the basis, never the motion)."""
        r, n = Q1.shape[1], self.model.n
        if r == 0 or T.shape[1] == 0:
            return np.zeros((n, n))
        eps = PFAFFIAN_RATE_STEP / max(float(np.max(np.abs(v))), 1.0)
        if self.fast_rhs is not None:
            return self.fast_rhs.omega(x, v, eps, pqr, Q1, T)
        zero = np.zeros(n)
        Cp = self.ws.velocity_constraints(t + eps, x + eps * v, zero)[1]
        Cm = self.ws.velocity_constraints(t - eps, x - eps * v, zero)[1]
        AdQ = (Cp - Cm) @ np.hstack([Q1, T]) / (2 * eps)
        return omega_continued(AdQ[pqr.perm[:r]], pqr.R[:r, :r], self.reg)

    def channels(self, t, y):
        """As ``NullSpace.channels`` (rank and R diagonal of the last accepted step), with qd_ind = w and T
        those of y in the chart of its step (a sample inside a step: the step's frozen basis)."""
        out = super().channels(t, y)
        T = self._chart_at(t).T
        out["qd_ind"] = (y[self.model.n:], out["qd_ind"][1])
        out["T"] = (T.ravel(), out["T"][1])
        return out


class ContinuationNullSpace(TrackedRatio, CrossingWindow, ContinuationEquations):
    """``--formulation nullspace --basis continuation`` (module docstring) with the singular window of
    :mod:`.crossing_window`: inside it the lagrange equations carry [q, v] and the chart is continued by eq. 22 and
    App. A at every accepted state; behind it the run resumes in the newest chart with w = T^T v."""

    def _layout(self, t, q, v):
        return np.concatenate([q, self._chart_at(t).T.T @ v])

    def _window_step(self, t, q, v):
        """The chart at an accepted state inside the window (eq. 22, App. A; Omega of eqs 19-20), w = T^T v, rank,
        R's diagonal and the singular tracker, as in ``after_step``; returns w."""
        old, r = self._chart, self.generic_rank
        A = self.ws.velocity_constraints(t, q, v)[1]
        pqr = self._qr(A)
        Q1 = pqr.Q[:, :r]
        T = self._continue_basis(old, t - old.t, Q1) if self.f else old.T
        w = T.T @ v
        self._charts = self._charts[-2:] + [Chart(t, Q1, T, self._omega(t, q, v, pqr, Q1, T))]
        self._accept_basis(t, q, v, pqr, w, T, A)
        return w

    def _resume(self, t, q, v):
        return np.concatenate([q, self._window_step(t, q, v)])


def nullspace(model, *, basis: str = "continuation", **options) -> NullSpaceEquations:
    """The nullspace formulation with the named tangent basis on the dense path: ``continuation`` (eq. 22, this module),
    ``flow`` (T' = -A^+ A' T integrated with the step) or ``recompute`` (a fresh QR at every step, eqs 8, 25, 28). The
    registry's ``nullspace`` (formulations.nullspace_sparse.nullspace) adds the sparse path of large models."""
    if basis == "continuation":
        return ContinuationNullSpace(model, **options)
    return NullSpace(model, basis=basis, **options)
