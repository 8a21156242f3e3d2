"""Null-space (Maggi-Kane) formulation with a QR tangent basis and its continuation (paper 000).

ODE state y = [x (n), w (f), vec(T) (n f)]: the redundant coordinates x, the generalized (independent)
velocities w = q_dot (eq. 4a) and the tangent basis T (n, f), f = n - r_g, r_g the rank at the
initial configuration (the generic rank; for the paper's mechanisms the rank away from singular
configurations). With A^+ the pseudo-inverse (here the smooth regularised one, tangent.SmoothPinv):

    x'  = T w + beta',                 beta' = Q1 p' = -A^+ Phi_t                      (eqs 9, 11b)
    a_perp = beta'' = Q1 p'' = A^+ gamma,  gamma = -(A x')_x x' - 2 Phi_xt x' - Phi_tt  (eqs 6, 10)
    z   = (T^T M T)^-1 T^T (f - M beta'')                                               (eq. 11a)
    T'  = -A^+ A' T                    (Q' = Q Omega with Omega_22 = 0; eqs 15-20, App. B/C in tangent.py)
    w'  = z + T'^T x'                  (d/dt of w = T^T x'; T'^T x' = 0 for scleronomic constraints)

x'' = T z + beta'' satisfies A x'' = gamma and T^T (M x'' - f) = 0: the motion of eq. 3. A' T comes
exactly from gamma by polarisation (tangent.jacobian_rate_times). The dynamics never decide a rank
inside a step: the right-hand side is a smooth function of y (the lesson of lagrange.py and
linalg.gauss_solve: near a singular configuration naive solves lose accuracy like eps/sigma^2 and a
hard rank switch makes the right-hand side jump, so that adaptive steps collapse).

After every accepted step (eqs 12-13, 22, App. A):
1. x is projected onto Phi = 0 by minimum-norm Gauss-Newton: the correction lies in span(Q1) (eq. 12-13);
2. the pivoted QR of A^T at the new x (eq. 23) gives R's diagonal and the rank, decided with
   ``rank_tol`` (linalg.RankTolerance: |R_ii| > rtol |R_11|, rtol = sqrt(eps), scale-aware);
3. basis ``flow``: T, integrated with the step (the exact flow of eq. 15 whose frozen-Omega version is
   eq. 22; ``continuation``, the default of the registry, is that discrete eq. 22 itself:
   formulations.nullspace_continuation), is re-orthogonalised against the new
   Q1_ns as X (X^T X)^(-1/2), X = (I - Q1_ns Q1_ns^T) T (App. A), with the projector written as
   I - A_mu^+ A (tangent.smooth_reorthogonalize: no rank decision, so a step that lands near a
   singular configuration still removes the drift of T along the motions that only exist there;
   Q1_ns of the rank decided at that step would keep it and the run would leave on the other
   branch); w is kept, so w is continuous.
   Basis ``recompute`` (the classical method): T = Q[:, r_g:] of the fresh factorisation (eqs 8, 25, 28)
   and w = T_new^T T_old w_old (same physical velocity): sign flips and rotations of T make w jump.
   This is the plain method paper 000 compares against (Figs 10, 15): at a singular configuration the
   fresh factorisation does not determine the tangent of the branch (Q[:, r:] is an arbitrary admissible
   motion, Fig. 10 "1st/2nd mov"). ``recompute_guard`` > 0 (default 0: off) keeps the previous basis
   (re-orthogonalised as in continuation) where |R_rr| < recompute_guard |R_11| (r = r_g); 1e-5 ~ 10
   sqrt(projection tolerance 1e-12): at distance d, Phi ~ d^2 is below that tolerance for d < 1e-6.
4. singular configurations: when the r_g-th singular value of A has a local minimum over the
   accepted steps below ``singular_screen`` times the largest one, its time is located by golden-section
   search on the cubic Hermite interpolant of (x, x') projected onto Phi = 0; where the pivoted
   rank there is below r_g, a singular event is recorded with the admissible motions (null space)
   split into the one continuing the motion before (nearest orthonormal basis to the tangent basis
   before, App. A) and the new ones (its orthogonal complement in the null space).
"""
from __future__ import annotations

import numpy as np
import scipy.linalg as sla

from ..errors import MultibodyError, SimulationError
from ..kinematics import KinematicTolerance, solve_positions
from ..linalg.rank import (NORMAL_ERROR_WEIGHT, RankTolerance, Regularization, min_norm_solve, pivoted_qr,
                           row_space_filter)
from ..linalg.tangent import SmoothPinv, jacobian_rate_times, polar_factor, smooth_reorthogonalize
from ..fast.lapack import fast_pivoted_qr
from ..fast.nullspace import fast_nullspace_rhs
from ..fast.packed import compiled_workspace
from .base import Accelerations, Formulation
from .crossing_window import CrossingWindow, TrackedRatio
from .flow_error import independent_part
from .singular import SingularTracker
from .velocity_error import (PhysicalStates, physical_error, stage_velocity_change, turn_velocity_change,
                             velocity_change)

BASES = ("continuation", "flow", "recompute")

#: Width of the smooth pseudo-inverse (tangent.SmoothPinv), mu = rel * sigma_1. Near a singular
#: configuration at distance sigma the 0/0 solves A^+ gamma and A^+ A' T carry the round-off
#: eps |gamma| / sigma; with the regularisation it is capped at eps / (2 rel) ~ 1e-9 relative, below
#: the tightest tolerances used (rtol 1e-10), so the adaptive steps do not collapse there. With
#: rel = 1e-10 (lagrange's value) the noise reaches 1e-8 within 1e-8 of the singular configuration
#: and the triple four-bar's steps collapsed at rtol 1e-9 (measured). Price: a constrained component
#: with singular value s carries the relative error (rel sigma_1 / s)^2 (1e-8 at s = 1e-3 sigma_1),
#: which the projection after each step removes from the positions.
NULLSPACE_REGULARIZATION = Regularization(rel=1e-7)

#: Step (in time units at |x'| = 1) of the central difference for Psi' T of nonholonomic rows: the
#: truncation error is ~ step^2 times the third derivative of Psi, the round-off ~ eps / step;
#: 1e-5 balances both at ~1e-10.
PFAFFIAN_RATE_STEP = 1e-5


class NullSpaceEquations(PhysicalStates, Formulation):
    """Maggi-Kane equations in a QR tangent basis (module docstring); :class:`NullSpace` adds the singular window."""

    name = "nullspace"
    supports_nonholonomic = True     # A below is C = [Phi_q; Psi] (paper 003 eq. 5); x projected on Phi only
    #: the stages of an integrated basis (``flow``, ``recompute``) take B = App. A of T at the stage's x (_velocity)
    stage_basis = True
    #: the measure counts the forced velocity change (_physical_error; not yet on the sparse path: nullspace_sparse_book)
    forced_change = True

    def __init__(self, model, *, basis: str = "flow", rank_tol: RankTolerance = RankTolerance(),
                 regularization: Regularization = NULLSPACE_REGULARIZATION,
                 projection_tol: KinematicTolerance = KinematicTolerance(max_iterations=10),
                 singular_screen: float = 0.2, recompute_guard: float = 0.0, fast: bool = True):
        super().__init__(model)
        self.ws = compiled_workspace(model, fast) or self.ws     # the same numbers, one compiled call (issue 16)
        self.fast_rhs, self._memo = None, None
        if basis not in BASES[1:]:     # "continuation": nullspace_continuation.ContinuationNullSpace
            raise MultibodyError(f"unknown basis '{basis}' for the nullspace formulation; choose "
                                 f"{', '.join(BASES)}.")
        self.basis, self.rank_tol, self.reg = basis, rank_tol, regularization
        self.projection_tol = projection_tol
        self.recompute_guard = recompute_guard
        self.tracker = SingularTracker(self, screen=singular_screen)
        self.generic_rank = self.f = 0
        self._last = None        # (t, rank, R_diag, w, T) of the last accepted state
        self._jump: tuple = (None, 0.0)     # (t, size) of the largest jump of w at a re-basis (issue 17: a
        # running max, no list per step, so memory stays flat however long the run)
        self._wmax = 0.0
        self.events, self.error_filter = [], None        # the local error is measured on [x, v] (error_measure)
        self.dense_note = _dense_note(model)

    # ------------------------------------------------------------------ state layout
    def initial_state(self, t, q, v):
        A = self.ws.velocity_constraints(t, q, v)[1]
        pqr = pivoted_qr(A, self.rank_tol)
        self.generic_rank, n = pqr.rank, self.model.n
        self.f = n - pqr.rank
        T = pqr.Q[:, pqr.rank:]
        w = T.T @ v
        self._store(t, pqr, w, T)
        self.fast_rhs = fast_nullspace_rhs(self, continuation=False)
        return np.concatenate([q, w, T.ravel()])

    def compiled_attempts(self):
        """The compiled step attempts (fast.nullspace.NullSpaceAttempts) where they reproduce this formulation's
        right-hand side and error measure (fast.nullspace.attempts_apply), else None (integrate.explicit_compiled)."""
        from ..fast.nullspace import NullSpaceAttempts, attempts_apply
        return NullSpaceAttempts if attempts_apply(self) else None

    def unpack(self, y):
        """(x (n,), w (f,), T (n, f)) of the ODE state."""
        n, f = self.model.n, self.f
        return y[:n], y[n:n + f], y[n + f:].reshape(n, f)

    def split(self, t, y):
        """(x, x'): x' of eq. 11b, compiled where the model allows; the last one is kept (the step watch, the crossing
        monitor and the recorder ask for the same state in turn)."""
        n, memo = self.model.n, self._memo
        if memo is not None and memo[0] == t and np.array_equal(memo[1], y):
            return y[:n], memo[2].copy()
        out = self.fast_rhs.dynamics(t, y) if self.fast_rhs is not None else None
        if out is not None:          # compiled: the same x' (tests/test_fast_nullspace.py)
            xdot = out[0][:n]
        else:
            x, w, T = self.unpack(y)
            xdot = self._velocity(t, x, w, T)[0]
        self._memo = (t, y.copy(), xdot.copy(), out)
        return y[:n], xdot

    def _velocity(self, t, x, w, T):
        """x' = B w + beta' (eq. 11b), A, the smooth pseudo-inverse of A, gamma(x') (None when it must be evaluated at
        the corrected x') and B: the stage basis (:meth:`stage_basis`: App. A of T at x), else T."""
        xdot = T @ w
        _, A, Phi_t, gamma = self.ws.velocity_constraints(t, x, xdot)
        pinv = SmoothPinv.of(A, self.reg)
        if self.stage_basis and self.f:         # App. A of T at x, from the generic rank's singular values only
            r = self.generic_rank
            T = polar_factor(T - pinv.Wt[:r].T @ (pinv.s[:r, None] * (pinv.U[:, :r].T @ (A @ T))))
            xdot, gamma = T @ w, None
        if np.any(Phi_t):            # rheonomic: gamma must be evaluated at the corrected x'
            xdot, gamma = xdot - pinv @ Phi_t, None
        return xdot, A, pinv, gamma, T

    # ------------------------------------------------------------------ dynamics
    def _dynamics(self, t, x, w, T):
        """x', x'' (eqs 10, 11a), z and T' at a state (T: the stage basis B, _velocity)."""
        xdot, A, pinv, gamma, T = self._velocity(t, x, w, T)
        if gamma is None:
            gamma = self.ws.velocity_constraints(t, x, xdot)[3]
        M, f = self.model.mass(x), self.ws.forces(t, x, xdot)
        a_perp = pinv @ gamma                                           # beta'' = Q1 p''
        MT = M @ T
        try:
            z = sla.solve(T.T @ MT, T.T @ (f - M @ a_perp), assume_a="pos", check_finite=False)
        except (sla.LinAlgError, ValueError) as exc:
            raise SimulationError(f"T^T M T is not positive definite at t = {t:g} ({exc}): every "
                                  "admissible motion must carry mass or inertia.") from None
        Tdot = -(pinv @ self._rate_times(t, x, xdot, T)) if self.f else T
        return xdot, T @ z + a_perp, z, Tdot, A, M, f

    def _rate_times(self, t, x, xdot, T):
        """C' T ((m + h), f): holonomic rows exactly from gamma by polarisation; Pfaffian rows Psi' T
        by a central difference along (x', 1) with step PFAFFIAN_RATE_STEP / max(|x'|, 1) (their
        bilinear form (Psi u)_q v is not symmetric, so gamma does not determine it)."""
        gamma_at = lambda v: self.ws.constraints(t, x, v)[3]          # noqa: E731
        AT = jacobian_rate_times(gamma_at, xdot, T)
        if not self.ws.h:
            return AT
        eps = PFAFFIAN_RATE_STEP / max(float(np.max(np.abs(xdot))), 1.0)
        m = self.ws.m
        zero = np.zeros_like(x)
        Cp = self.ws.velocity_constraints(t + eps, x + eps * xdot, zero)[1][m:]
        Cm = self.ws.velocity_constraints(t - eps, x - eps * xdot, zero)[1][m:]
        return np.vstack([AT if m else np.zeros((0, T.shape[1])), (Cp - Cm) @ T / (2 * eps)])

    def rhs(self, t, y):
        self.nfev += 1
        memo = self._memo       # the state after_step evaluated last (the stepper's first stage after it)
        if memo is not None and memo[3] is not None and memo[0] == t and np.array_equal(memo[1], y):
            self.fast_rhs.paths[memo[3][2]] += 1
            return memo[3][0].copy()
        out = self.fast_rhs(t, y) if self.fast_rhs is not None else None
        if out is not None:         # compiled: the same numbers up to round-off (tests/test_fast_nullspace.py)
            return out[0]
        x, w, T = self.unpack(y)
        xdot, _, z, Tdot, *_ = self._dynamics(t, x, w, T)
        return np.concatenate([xdot, z + Tdot.T @ xdot, Tdot.ravel()])

    def accelerations(self, t, q, v):
        T = self._last[4]
        out = self.fast_rhs.dynamics(t, np.concatenate([q, T.T @ v, T.ravel()])) if self.fast_rhs else None
        if out is not None:
            a, z, A = out[1], out[3], self.ws.constraints(t, q, v)[1]
            lam = self._multipliers(A, self.ws.forces(t, q, v) - self.model.mass(q) @ a)
            return Accelerations(a, lam, {"rank": self._last[1], "qdd_ind": z, "basis": self.basis})
        _, a, z, _, A, M, f = self._dynamics(t, q, T.T @ v, T)
        lam = min_norm_solve(A.T, f - M @ a)
        return Accelerations(a, lam, {"rank": self._last[1], "qdd_ind": z, "basis": self.basis})

    # ------------------------------------------------------------------ after each accepted step
    def after_step(self, t, y):
        x, w, T = self.unpack(y)
        v_before = self.split(t, y)[1]
        x = self._project(t, x)                                                         # eqs 12-13
        A = self.ws.velocity_constraints(t, x, v_before)[1]
        pqr = self._qr(A)
        T_new = self._next_basis(T, A, pqr)
        w, T = T_new.T @ v_before, T_new     # the same physical velocity, in the new basis (its tangent part)
        y = np.concatenate([x, w, T.ravel()])
        self._accept_basis(t, x, self.split(t, y)[1], pqr, w, T, A)
        return y

    def _accept_basis(self, t, x, v, pqr, w, T, A=None) -> None:
        """Keep an accepted state's rank, R diagonal, w and T; note the jump of w; feed the singular tracker (A: the
        constraint Jacobian at x)."""
        prev = self._last
        self._store(t, pqr, w, T)
        self._note_jump(t, w, prev[3])
        self._wmax = max(self._wmax, float(np.max(np.abs(w), initial=0.0)))
        self.tracker.accepted(t, x, v, T, A)

    def _next_basis(self, T, A, pqr):
        """The basis at an accepted state: App. A from T (``flow``, or ``recompute`` under its guard), else the fresh
        QR's Q[:, r_g:] (``recompute``)."""
        if self.basis == "flow" or pqr.R_diag[self.generic_rank - 1] < self.recompute_guard * pqr.R_diag[0]:
            return smooth_reorthogonalize(T, A, self.reg)                              # App. A
        return pqr.Q[:, self.generic_rank:]

    def _qr(self, A):
        """pivoted_qr(A, rank_tol) (eq. 23), by direct LAPACK calls on the compiled path (the same numbers)."""
        return fast_pivoted_qr(A, self.rank_tol) if self.fast_rhs is not None else pivoted_qr(A, self.rank_tol)

    def _multipliers(self, A, b):
        """min_norm_solve(A^T, b): the minimum-norm multipliers, compiled where the model allows."""
        return self.fast_rhs.multipliers(A, b, RankTolerance().rtol) if self.fast_rhs else min_norm_solve(A.T, b)

    def _project(self, t, x):
        """x projected onto Phi(x, t) = 0 (paper 000 eqs 12-13; kinematics.solve_positions, compiled on a
        fast.packed.CompiledWorkspace: the same iterations)."""
        try:
            return solve_positions(self.model, x, t, ws=self.ws, tol=self.projection_tol)
        except MultibodyError as exc:
            raise SimulationError(f"projection onto the constraints failed at t = {t:g}: {exc}") from None

    def _note_jump(self, t, w, w_old) -> None:
        """Keep the first largest max |w - w_old| over the re-bases and its time."""
        jump = float(np.max(np.abs(w - w_old), initial=0.0))
        if self._jump[0] is None or jump > self._jump[1]:
            self._jump = (t, jump)

    def _store(self, t, pqr, w, T):
        self._last = (t, pqr.rank, pqr.R_diag, w.copy(), T.copy())

    def error_measure(self, t_old, y_old, t_new, y_new, err, integral=None):
        """The local error and both end states on the physical state [x, v] (integrate.explicit.RungeKutta's
        ``error_measure``; formulations.velocity_error): dv = T (dw + K w), K the skew part of T^T dT
        (:func:`.stage_velocity_change`: ``flow`` with the stage basis; a chart: T dw; an integrated T taken as it is,
        the sparse path: dT w + T dw - dT dw), the normal parts of dx and dv at :meth:`normal_weight`; ``flow``: the
        tangential dx bounded by its two parts (formulations.flow_error; dq from the stepper's ``integral``); plus
        (``flow`` with the stage basis and the chart) the velocity change -A^+ A'(v) P_t dx the tangential position
        error forces (:func:`.turn_velocity_change`; the measure derived in formulations.velocity_error: Dpi DP err of
        the continued motion, paper 000 eqs 11b-13, App. A; the chart's: formulations.nullspace_continuation, "The
        measure"). A state of the singular window's layout [q, v] is measured as it is."""
        n = self.model.n
        if y_new.shape[0] == 2 * n:
            return err, y_old, y_new
        dq = integral[n:n + self.f] if integral is not None and self.basis == "flow" and self.stage_basis else None
        return self._physical_error(t_new, y_new, err, dq), self._physical(t_old, y_old), self._physical(t_new, y_new)

    error_measure.integral = True      # the stepper passes ``integral`` (integrate.explicit.RungeKutta)

    @property
    def normal_weight(self) -> float:
        """Weight of the normal parts of dx and dv in the measured error: NORMAL_ERROR_WEIGHT (lagrange's) where the
        stages' velocity is tangent (a chart X w, A X = 0; the stage basis B w): the projection removes them, but they
        must stay small enough for it to land on the same branch (removed, a driven slider-crank took one step from
        0.15 s to 1 s onto the mirror assembly). 1 for an integrated T taken as it is (the sparse path): its normal
        part acts on the motion within the step at first order (x' = T w, z projects the forces through it)."""
        return NORMAL_ERROR_WEIGHT if self.basis == "continuation" or self.stage_basis else 1.0

    def _physical_error(self, t, y, err, dq=None):
        """[dx, dv] filtered (velocity_error.physical_error; compiled where possible); dq: flow_error's bound or None."""
        n, f = self.model.n, self.f
        x, w, T = self.unpack(y)
        flow = self.basis != "continuation"
        if self.fast_rhs is not None:   # compiled: the numbers of the compiled attempts (fast.nullspace_rk), bitwise
            out = self.fast_rhs.physical_error(y, err, T, flow, self.normal_weight, dq)
            if out is not None:
                return out
        dw, dT, m = err[n:n + f], (err[n + f:].reshape(n, f) if flow else None), self.ws.m
        dv = stage_velocity_change(T, w, dw, dT) if flow and self.stage_basis else velocity_change(T, w, dw, dT)
        A = self.ws.velocity_constraints(t, x, np.zeros(n))[1]
        e, u = physical_error(err[:n], dv, A, m, self.normal_weight), row_space_filter(A[:m], err[:n])
        if dq is not None:                  # the tangential dx bounded by its two parts (flow_error)
            d = independent_part(T, u, dq)
            e[:n], u = e[:n] + d, u + d
        if self.forced_change and (self.stage_basis or not flow):   # + the velocity change dx forces
            e[n:] += turn_velocity_change(self.ws, t, x, T @ w, u, A, self.generic_rank)
        return e

    # ------------------------------------------------------------------ output
    def channels(self, t, y):
        _, rank, diag, w, T = self._last
        r = self.generic_rank
        names = self.model.coordinate_names
        return {
            "rank": ([rank], ("rank",)),
            "R_diag": (diag, tuple(f"R{i + 1}{i + 1}" for i in range(len(diag)))),
            "R_min": ([diag[r - 1] if r else np.nan], ("|R_rr|",)),
            "qd_ind": (w, tuple(f"qd{j + 1}" for j in range(self.f))),
            "T": (T.ravel(), tuple(f"{names[i]}/T{j + 1}" for i in range(len(names)) for j in range(self.f))),
        }

    def summary(self):
        scale = self._wmax or 1.0
        return {
            **({"linear_algebra": self.dense_note} if self.dense_note else {}),
            "basis": self.basis, "generic_rank": self.generic_rank, "dof": self.f,
            "redundancy": self.ws.m + self.ws.h - self.generic_rank,
            "rank_tolerance": {"rtol": self.rank_tol.rtol, "atol": self.rank_tol.atol},
            "qd_ind_jump_max_rel": float(self._jump[1] / scale),
            "qd_ind_jump_time": None if self._jump[0] is None else float(self._jump[0]),
            "singular_events": [{k2: e[k2] for k2 in ("t", "rank", "continuing", "new")}
                                for e in self.events],
        }


class NullSpace(TrackedRatio, CrossingWindow, NullSpaceEquations):
    """``--formulation nullspace --basis flow|recompute``: the equations of the module docstring with the singular
    window of :mod:`.crossing_window`: near a singular configuration, where A^+ gamma and A^+ A' T carry round-off
    ~eps / sigma_r^2, the lagrange equations carry [q, v] while the basis is continued by App. A at every accepted
    state (the singular events keep their continuing motion); behind it the run resumes with w = T^T v."""

    def _layout(self, t, q, v):
        T = self._last[4]
        return np.concatenate([q, T.T @ v, T.ravel()])

    def _window_step(self, t, q, v):
        """Rank, R's diagonal and T (as after a step: App. A, T <- X (X^T X)^(-1/2), X = (I - A_mu^+ A) T, or the fresh
        QR's for ``recompute``) at an accepted state inside the window, w = T^T v, the tracker; returns (T, w)."""
        A = self.ws.velocity_constraints(t, q, v)[1]
        pqr, T = self._qr(A), self._last[4]
        T = self._next_basis(T, A, pqr) if self.f else T
        w = T.T @ v
        self._accept_basis(t, q, v, pqr, w, T, A)
        return T, w

    def _resume(self, t, q, v):
        T, w = self._window_step(t, q, v)
        return np.concatenate([q, w, T.ravel()])


def _dense_note(model) -> str | None:
    """For models with n >= multibody.assembly.SPARSE_MIN_COORDINATES: a warning (and summary entry) that this
    formulation uses dense linear algebra (SVD/QR of A, O(n^3) per step; issue 7 item 3), else None."""
    import warnings
    from ..assembly import SPARSE_MIN_COORDINATES
    if model.n < SPARSE_MIN_COORDINATES:
        return None
    note = (f"dense: the nullspace formulation uses dense linear algebra (O(n^3) per step) and model "
            f"'{model.name}' has n = {model.n} >= {SPARSE_MIN_COORDINATES} coordinates; the lagrange formulation "
            "has a sparse path for large models")
    warnings.warn(note, RuntimeWarning, stacklevel=3)
    return note
