"""The singular window (issue 12): formulations that rebuild the velocity through a block that is singular at a
singular configuration hand the motion near it to the lagrange equations, which are smooth through it.

Why. ``partitioning`` rebuilds v = D^T v_I + [0; eta] through the dependent block C_D (paper 001 eqs 7, 9-14) and
``nullspace`` carries T and w with T' = -A^+ A' T, beta'' = A^+ gamma (paper 000 eqs 9-11, 15-22). Where the
Jacobian A loses rank every dependent block and A^+ are singular: near the crossing, at a relative distance
rho = sigma_r / sigma_1 (r the generic rank), a round-off change eps of q moves the rebuilt velocity by ~eps / rho
and the acceleration by ~eps / rho^2 (measured on the double four-bar: 3.3e-16 / theta and 1.4e-16 / theta^2 at
crank angle theta). The local error of a step of length h there carries h eps / rho^2 that no step size removes,
so at rtol 1e-12 every step that landed within rho ~ 2e-4 was rejected until the step collapsed, or the
after-step action corrected more than the tolerance. The motion itself is smooth through the crossing (the
exact reduction theta'' = -k cos theta of the four-bar chains); only the representation [q, v_I] or [x, w, T]
is not: at the crossing v_I does not determine v (paper 000 Sect. 3: two branches share q).

What. The relative round-off of the rebuilt acceleration, eps / rho^2, stays below the run's rtol where rho >=
sqrt(eps / rtol). :func:`window_ratio` opens the window at WINDOW_FACTOR times that. After every accepted step
:class:`CrossingWindow` samples rho (one SVD of A) and, below WINDOW_MAX, rate = |A_r^+ A'|_2 (:meth:`CrossingWindow._rate`: no
crossing lies within 1 / rate, by a relative perturbation bound of sigma_r); when rho, or its floor rho (1 - h rate)
one more step of the same length ahead, falls below the window, or a crossing may be fewer than RESOLVE_STEPS steps
ahead (RESOLVE_STEPS h rate > 1: the rebuilt equations, whose Lipschitz constant is that rate, ~1 / |t - t*|, are then
not resolved by the step), the state becomes y = [q, v] (the physical state, unchanged) and the
steps are those of :class:`~multibody.formulations.lagrange.Lagrange`: Gauss's principle with the penalty
(s_i / mu)^8 and the pinned projection (linalg.rank.pinned_solve), which keep the branch through the crossing by
construction (docs/guide/singular.md), with lagrange's local error measure (:meth:`CrossingWindow._window_error`). The formulation's own bookkeeping goes on inside the window (nullspace:
the tangent basis continued by App. A at every step, so the singular events keep their continuing motion).
Behind the crossing, once rho exceeds EXIT_FACTOR times the window and grows over a whole step behind the smallest
sample, and RESOLVE_STEPS h rate <= 1 again, the formulation resumes from the
physical state (q, v): partitioning with the best coordinates of the projective criterion (paper 001 eq. 23),
nullspace with the continued basis (w = T^T v). Entering and leaving change no number of the physical state
(the step watch checks that: simulation.step_watch.branch_move). Outside the window and below WINDOW_MAX,
``step_limit`` caps the next step at 1 / (RESOLVE_STEPS rate), a fraction of the least time to or from a crossing
(simulation.step_watch applies it), so that no step of the rebuilt equations reaches a crossing unseen and the step
after the exit is not the controller's long step of the window. The limit holds for the window's first step too
(twelfth session, 12he): with it cleared there, the entry steps of the N-four-bar (N = 10, nullspace-flow, dop853,
rtol 1e-6) ran at h rate 0.9-1.35, carried nearly all of the run's energy error with one sign, and their estimate
read 1.6-2.4 times below the error where h rate ~ 1.3 (h L <= 1 is where an embedded estimate bounds the error).
(Until session 11 the time to the crossing was extrapolated from a secant of rho over the last step; over the top
of rho it came out ~4x long, and two steps of
nullspace-flow, dop853, rtol 1e-4 on the N-four-bar with 40 cells stepped over a crossing unseen.)

The stepper continues on the new state with its step size (integrate.explicit.RungeKutta.reset takes a state of
another length). The layout tells the mode: a window state has 2 n entries; [q, v_I] has n + f, [x, w, T]
n + f + n f and [x, w] n + f, never 2 n for m > 0.
"""
from __future__ import annotations

import numpy as np
from scipy.linalg import eigh, svd

from ..linalg.rank import RankTolerance, generic_ratio, generic_ratio_of_values

#: the window opens at WINDOW_FACTOR sqrt(eps / rtol): there the relative round-off eps / rho^2 of the rebuilt
#: acceleration is rtol / WINDOW_FACTOR^2 (1/16 of the tolerance; the measured constant 1.4e-16 / theta^2 is below
#: eps / theta^2, and rho ~ theta on the double four-bar)
WINDOW_FACTOR = 4.0
#: the window closes behind the crossing where rho > EXIT_FACTOR times the window (and grows): a hysteresis, so
#: that a run does not enter and leave at every step
EXIT_FACTOR = 2.0
#: the window never opens wider than this (the crossing monitor's screen, simulation.crossings.SCREEN)
WINDOW_MAX = 0.2
#: the window also opens where a crossing may be fewer than RESOLVE_STEPS steps of the last length ahead (rho below
#: WINDOW_MAX; RESOLVE_STEPS h |A_r^+ A'|_2 > 1, CrossingWindow._rate), and closes only once it is as many steps behind:
#: the rebuilt equations' Lipschitz constant grows like 1 / |t - t*| (the 1 / rho of C_D^-1 or A^+), so a step longer
#: than a fraction of the time to the crossing is not resolved, and its local error estimate does not see the error it
#: makes (issue 12: at rtol 1e-4 the window of the round-off rule alone is 1.2e-5 wide, the flow basis resumed right
#: behind each crossing and its first 0.15 s step gained 4.6e-3 of the energy on the double four-bar, 46 tolerances,
#: unseen: 11 crossings for 10 in 10 s). One: 1 / rate is a least time to a crossing, itself half the true time next
#: to one (measured 2.0-2.3 within 0.03 s of the crossings of the double four-bar and of the N-four-bar with 40 cells),
#: so a step of 1 / rate there is half the time to the crossing, the fraction the earlier secant rule took with
#: RESOLVE_STEPS = 2 of its estimate; with 2 the windows of dop853 at rtol 1e-4 covered the whole run after the first
#: crossing (double four-bar partitioning: tip x0.1 -> x1.2 the envelope, lagrange's own x1.1; 1 gives x0.1 again)
RESOLVE_STEPS = 1.0
#: rtol assumed until the run tells the formulation its own (:meth:`CrossingWindow.set_tolerance`)
DEFAULT_RTOL = 1e-6


def window_ratio(rtol: float) -> float:
    """sigma_r / sigma_1 below which the lagrange equations carry the motion: WINDOW_FACTOR sqrt(eps / rtol)
    (capped at WINDOW_MAX); 6e-2 at rtol 1e-12, 6e-5 at 1e-6."""
    return float(min(WINDOW_MAX, WINDOW_FACTOR * np.sqrt(np.finfo(float).eps / max(rtol, 1e-300))))


class CrossingWindow:
    """Mixin (first base) of a formulation whose own state rebuilds the velocity through a block singular at a
    singular configuration. The formulation provides ``_layout(t, q, v) -> y`` (its state at a consistent
    physical state, no side effects), ``_window_step(t, q, v)`` (its bookkeeping at an accepted state inside the
    window) and ``_resume(t, q, v) -> y`` (its state behind the window)."""

    _own_error_filter = None
    #: the window's lagrange counts the forced velocity change (Lagrange._forced_change, _window_error) where this is
    #: True and the formulation's own measure counts it (``forced_change``; nullspace's sparse path does not yet)
    window_forced_change = True

    def __init__(self, *args, **kwargs):
        super().__init__(*args, **kwargs)
        self.window = window_ratio(DEFAULT_RTOL)
        self.windows: list[dict] = []
        self._lagrange = None
        self._in_window, self._ratio_prev, self._generic = False, None, 0
        self._t_prev, self.step_limit = None, None      # step_limit: see _resolved_step (simulation.step_watch)

    # ------------------------------------------------------------------ mode
    def set_tolerance(self, rtol: float, atol: float) -> None:
        """The run's tolerances (simulation.step_watch.StepWatch): they size the window."""
        self.window = window_ratio(rtol)

    def _windowed(self, y) -> bool:
        return np.shape(y)[0] == 2 * self.model.n

    @property
    def lagrange(self):
        """The lagrange formulation that carries the motion inside a window (made at the first one)."""
        if self._lagrange is None:
            from .lagrange import Lagrange
            counted = self.window_forced_change and getattr(self, "forced_change", True)
            self._lagrange = Lagrange(self.model, **({} if counted else {"forced_change": False}))
            rank = getattr(self, "generic_rank", None)
            if rank is not None:    # the rank off the singular configurations (its own is taken at its first step,
                self._lagrange._generic_rank = rank     # here at the window's entry, next to one)
        return self._lagrange

    @property
    def error_filter(self):
        return self._window_error

    @error_filter.setter
    def error_filter(self, fun):
        self._own_error_filter = fun

    def _window_error(self, t, y, err):
        """The local error the step control measures: the formulation's own filter outside the window; inside it
        lagrange's (normal components at NORMAL_ERROR_WEIGHT, linalg.rank, plus the velocity change -A_r^+ A'(v) P_t dq
        that the tangential position error forces, Lagrange._forced_change, where ``window_forced_change``), as in a
        lagrange run. Both measure the first-order change of the motion the run continues from (nullspace's chart:
        formulations.nullspace_continuation, "The measure"; flow: formulations.velocity_error; partitioning: its
        difference of split): one quantity on both sides of the window's edges. (12gh had
        left the window without the forced change because with it a continuation run at dopri5 rtol = atol = 1e-6 went
        from 3.9e-4 to 1.75e-3 m at the tip on the double four-bar. The reason, measured (energy error of the reduction
        per accepted step, summed): the chart's own measure then lacked the term, so its steps were not controlled
        (true / estimate up to 1.19 at 1e-5, benchmarks/flow_local_error.py continuation); their errors, |sum|
        3.4e-4 and 4.1e-4 J, summed to +6.1e-5 J with the old window and to +2.6e-4 J with the new one, whose shorter steps moved
        the chart's mesh: cancellation, not control. With the term on both sides the chart's steps carry |sum|
        1.7e-4 J, +2.4e-5 J signed, and the tip is 3.6e-5 m.) The sixth session
        measured the window's error whole, normal components included, because with the weight the 2x2 four-bar
        (dop853, rtol 1e-12) corrected 1.7e5 tolerances inside a window: that was the projection's level set
        (formulations.extended_projection), whose velocity near the crossing was eps / rho^2 off the branch. With the
        residuals in extended precision and the crossing step (simulation.crossings.CrossingMonitor.steer) the
        same runs correct <= 2.7 tolerances with the weight, and measured whole the crossing step's normal error
        was rejected, so the steps crept up to the crossing again (5e-8 s, N-four-bar with 4 cells, rtol 1e-12,
        atol 1e-14)."""
        if self._windowed(y):
            fun = self.lagrange.error_filter
            return err if fun is None else fun(t, y, err)
        fun = self._own_error_filter
        return err if fun is None else fun(t, y, err)

    # ------------------------------------------------------------------ the contract, dispatched on the layout
    def rhs(self, t, y):
        if self._windowed(y):
            self.nfev += 1
            return self.lagrange.rhs(t, y)
        return super().rhs(t, y)

    def split(self, t, y):
        if self._windowed(y):
            n = self.model.n
            return y[:n], y[n:]
        return super().split(t, y)

    def accelerations(self, t, q, v):
        if self._in_window:
            return self.lagrange.accelerations(t, q, v)
        return super().accelerations(t, q, v)

    def channels(self, t, y):
        if self._windowed(y):
            y = self._layout(t, *self.split(t, y))
        return super().channels(t, y)

    def summary(self):
        return {**super().summary(), "singular_window_ratio": self.window,
                "singular_windows": [dict(w) for w in self.windows]}

    # ------------------------------------------------------------------ after a step
    def after_step(self, t, y):
        if self._windowed(y):
            return self._inside(t, y)
        y_new = super().after_step(t, y)
        y_end = y if y_new is None else y_new
        q, v = self.split(t, y_end)
        ratio = self._ratio(t, q)
        rate = self._rate(t, q, v) if ratio < WINDOW_MAX else 0.0
        h = None if self._t_prev is None else t - self._t_prev
        self._ratio_prev, self._t_prev = ratio, t
        self.step_limit = _resolved_step(rate)
        ahead = ratio * (1.0 - (h or 0.0) * rate)       # rho's floor one more step of the same length ahead (_rate)
        if min(ratio, ahead) >= self.window and not _unresolved(rate, h):
            return y_new
        # the entry step keeps the limit (issue 12he): lagrange's equations go through A_r^+ ~ 1 / rho there too, and
        # a first step of the controller's length h rate ~ 1.3 was estimated 1.6-2.4 times short of its error
        self._in_window = True
        self.lagrange.initial_state(t, q, v)
        path = self.lagrange.sparse_path     # lagrange's own dense window (formulations.lagrange_sparse) for the first
        if path is not None:                 # step too, from this state alone (not a state of an earlier window)
            path.last = None
            path.accepted(t, q)
        self.windows.append({"t_enter": float(t), "t_exit": None, "min_ratio": float(ratio), "t_min": float(t)})
        return np.concatenate([q, v])

    def _inside(self, t, y):
        """After a step inside the window: lagrange's projection, then leave if rho has passed its minimum (the last step
        begins after the smallest sample: a step across the crossing reads its |rho| as slow growth), exceeds
        EXIT_FACTOR times the window and the crossing is RESOLVE_STEPS steps behind (:func:`_unresolved`)."""
        self.step_limit = None          # only the entry step is limited (after_step); the window's others are not
        y_new = self.lagrange.after_step(t, y)
        y_end = y if y_new is None else y_new
        t_prev = self._t_prev
        q, v = self.split(t, y_end)
        ratio = self._ratio(t, q)
        prev, self._ratio_prev = self._ratio_prev, ratio
        self._t_prev = t
        entry = self.windows[-1]
        behind = entry.get("t_min", entry["t_enter"]) < (t_prev if t_prev is not None else -np.inf)
        if ratio < entry["min_ratio"]:
            entry["min_ratio"], entry["t_min"] = float(ratio), float(t)
        if ratio > EXIT_FACTOR * self.window and prev is not None and ratio > prev and behind:
            rate = self._rate(t, q, v) if ratio < WINDOW_MAX else 0.0
            if not _unresolved(rate, t - t_prev):
                self._in_window = False
                entry["t_exit"] = float(t)
                self.step_limit = _resolved_step(rate)
                return self._resume(t, q, v)
        self._window_step(t, q, v)
        return y_new

    def _ratio(self, t, q) -> float:
        """sigma_r / sigma_1 of the holonomic Jacobian at q, r the generic rank (the largest rank seen, rank
        decided with linalg.RankTolerance's sqrt(eps)); 1 without holonomic rows."""
        m = self.ws.m
        if m == 0:
            return 1.0
        A = self.ws.velocity_constraints(t, q, np.zeros_like(q))[1][:m]
        ratio, self._generic, _ = generic_ratio(A, self._generic)
        return ratio

    def _rate(self, t, q, v) -> float:
        """|A_r^+ A'|_2 at (t, q, v): A_r^+ = V_r Sigma_r^-1 U_r^T the pseudo-inverse of A truncated at the generic rank r,
        A' = dA/dt along the motion. Why (issue 12): with X = U_r^T A (r x n, full row rank, sigma_min(X) = sigma_r(A)),
        sigma_r(A + E) >= sigma_min(X + U_r^T E) (a projection does not raise singular values) and X + U_r^T E = X (I +
        A_r^+ E), so sigma_r(A + E) >= sigma_r(A) (1 - |A_r^+ E|_2) (a multiplicative perturbation, Eisenstat & Ipsen,
        SIAM J. Numer. Anal. 32, 1995; sigma_r(X K) >= sigma_r(X) sigma_min(K)): the rank cannot fall below r while |A_r^+ (A(t + s) - A(t))|_2 < 1, i.e. for |s| < 1 / rate with
        A' at the state (first order in s), ahead and behind: a least time to or from a
        crossing, no extrapolation of samples. The same number is the Lipschitz constant of the tangent basis' equation
        T' = -A^+ A' T (paper 000 eqs 15-22). Measured on the N-four-bar with 40 cells (lagrange, dop853 1e-7, every
        0.1 s of 9 s): the true time to the next crossing is 1.35-2.4 times 1 / rate on the approach, where Weyl's
        absolute bound sigma_r / |A'|_2 is 15-25 times short (sigma_r is the least of 40 singular values that vanish
        together, 1 / 60 of sigma_1 at most). A' by central differences along (1, v) over eps^(1/3) L / |v|_max
        (relative error ~eps^(2/3)); 0 where the configuration does not move."""
        m = self.ws.m
        speed = float(np.max(np.abs(v), initial=0.0))
        if m == 0 or not speed > 0.0:
            return 0.0
        delta = np.cbrt(np.finfo(float).eps) * self.model.length_scale / speed
        jac = lambda s: self.ws.velocity_constraints(t + s, q + s * v, np.zeros_like(q))[1][:m]
        U, s = self._decomposition(t, q)
        if not s[0] > 0.0:
            return 0.0
        r = self._generic = max(self._generic, int(np.count_nonzero(s > RankTolerance().rtol * s[0])))
        if not s[r - 1] > 0.0:
            return np.inf
        M = (U[:, :r].T @ ((jac(delta) - jac(-delta)) / (2.0 * delta))) / s[:r, None]       # Sigma_r^-1 U_r^T A'
        return float(np.sqrt(max(eigh(M @ M.T, eigvals_only=True, subset_by_index=[r - 1, r - 1])[0], 0.0)))

    def _decomposition(self, t, q):
        """(U, s): the thin SVD's left singular vectors and singular values of the holonomic Jacobian at (t, q)
        (nullspace: the singular tracker's of the accepted state, :class:`TrackedRatio`)."""
        U, s, _ = svd(self.ws.velocity_constraints(t, q, np.zeros_like(q))[1][:self.ws.m], full_matrices=False)
        return U, s


class TrackedRatio:
    """Mixin before :class:`.crossing_window.CrossingWindow`: gives the window its rho = sigma_r / sigma_1 of the holonomic
    rows at an accepted state (CrossingWindow._ratio, the rule of linalg.rank.generic_ratio) and the SVD its rate takes
    (CrossingWindow._decomposition) from the thin SVD the singular tracker took of the same A there (without
    nonholonomic rows C = A): one SVD per accepted state, not two or three."""

    def _kept(self, t, q):
        """The tracker's (t, x, s, U) of A at (t, q), or None."""
        kept = self.tracker.accepted_values
        ok = not self.ws.h and kept is not None and kept[0] == t and np.array_equal(kept[1], q)
        return kept if ok else None

    def _decomposition(self, t, q):
        kept = self._kept(t, q)
        return super()._decomposition(t, q) if kept is None or kept[3] is None else (kept[3], kept[2])

    def _ratio(self, t, q):
        kept = self._kept(t, q)
        if kept is None:
            return super()._ratio(t, q)
        ratio, self._generic, _ = generic_ratio_of_values(kept[2], self._generic)
        return ratio


def _unresolved(rate: float, h) -> bool:
    """True where the last step h was longer than 1 / (RESOLVE_STEPS rate), rate = |A_r^+ A'|_2 (:meth:`CrossingWindow._rate`):
    a crossing may then lie fewer than RESOLVE_STEPS steps of that length away (ahead or behind), and the rebuilt
    equations, whose Lipschitz constant is that rate, are not resolved by such a step."""
    return h is not None and RESOLVE_STEPS * abs(h) * rate > 1.0


def _resolved_step(rate: float):
    """The longest next step of the rebuilt formulation outside the window: 1 / (RESOLVE_STEPS rate), a fraction of the
    least time 1 / rate to (or from) a crossing (:meth:`CrossingWindow._rate`); None (no limit) for rate 0."""
    return None if not rate > 0.0 else 1.0 / (RESOLVE_STEPS * rate)
