"""``--formulation minimal``: Voronets equations in minimal coordinates (paper 002 Sect. 3.3,
eqs 10-13; Voronets 1901, a special case of Maggi's equations).

The n coordinates are split into m dependent ones p and n - m independent (minimal) ones s,
q = (p, s), A = (A_p, A_s). The orthogonal complement (10)

    F = [ -A_p^-1 A_s ; I ]      (A F = 0, q' = F s' + w_v),

turns M q'' = f - A^T lambda, with q'' = F s'' + w and w the particular solution of A w = gamma with
w_s = 0 (w_p = A_p^-1 gamma; this is F' s' of the paper for scleronomic constraints), into the
n - m Voronets equations (12)-(13)

    M_bar s'' = F^T (f - M w),       M_bar = F^T M F.

The integrated state is y = (s, s') of dimension 2 (n - m): the constraints are satisfied by
construction, p and p' are recovered at every evaluation from Phi(p, s, t) = 0 (Newton, warm-started,
tolerance :class:`~multibody.kinematics.KinematicTolerance`) and p' = -A_p^-1 (A_s s' + Phi_t).

Choice of s: QR of A with column pivoting (the best-conditioned A_p) when the run starts. A set of
minimal coordinates is valid only locally (paper 002 Sect. 3.3): after every accepted step the
choice is re-examined, and s is switched (a flagged restart of the integrator) when cond(A_p) of the
current set exceeds ``SWITCH_RATIO`` times that of the pivoted choice. Redundant constraint rows are
removed by a pivoted QR at the same moments (the paper assumes non-redundant constraints).

Where minimal coordinates apply: on paths without singular configurations. Where A loses rank its dependent
block A_p is singular for every choice of s (paper 002 Sect. 3.3), p' = -A_p^-1 A_s s' is 0/0 there and Newton
picks the branch after it by round-off. The run therefore stops at the first singular configuration, naming its
time and the rank there, and never goes on from a state recovered beyond it:

- every recovery continues from an accepted state (the start of the step containing t), never from a stage of
  another attempt (a rejected dop853 step's stage at 0.764, past the double four-bar's crossing at 0.714, once put
  the next attempt on another assembly: crank angle 647 rad at t = 0.43, and the run stopped there with a
  misleading message);
- a stage whose p cannot be recovered rejects its attempt (``error_filter``: infinite error, the controller's
  smallest factor) instead of ending the run;
- where sigma_min / sigma_max of the kept rows falls towards 0, the steps approach the zero it extrapolates to
  geometrically (``step_limit``), so no stage lies beyond it;
- the run stops where an accepted state's ratio reaches the rank tolerance (sqrt(eps), linalg.rank.RankTolerance),
  at a crossing the monitor locates inside a step (simulation.crossings, ``passes_singular_configurations``), or,
  where the error control collapses the step first (p' carries the round-off eps / sigma_min), with
  ``failure_hint`` naming the singular configuration ahead (time extrapolated from the ratio and its rate, rank).
"""
from __future__ import annotations

import numpy as np

from ..errors import MultibodyError, SimulationError
from ..kinematics import KinematicTolerance, solve_positions, solve_velocities
from ..linalg.rank import RankTolerance, min_norm_solve, pivoted_qr
from ..linalg.projectors import independent_coordinates, orthogonal_complement
from .base import Accelerations, Formulation

#: switch the minimal coordinates when cond(A_p) of the current choice exceeds this multiple of the
#: condition number of the pivoted (best) choice: a factor 10 costs one digit of accuracy in p'.
SWITCH_RATIO = 10.0
EPS = float(np.finfo(float).eps)
#: approaching a singular configuration the run stops where the round-off of the dependent velocities,
#: eps / (sigma_min / sigma_max), exceeds this share of rtol (Minimal.set_tolerance)
ROUND_OFF_SHARE = 0.01
_NO_CHECK = KinematicTolerance(consistency=np.inf)
#: the dependent coordinates are recovered by Newton from a first-order prediction only if the
#: prediction's residual |Phi| is below this fraction of the model's length scale; otherwise the way from
#: the last recovered state is halved in (t, s) (continuation), so Newton cannot jump to another assembly
#: branch or another turn of an angle, however long the integrator's step (a driven model with no
#: freedom takes one step for the whole run)
PREDICTION_RESIDUAL = 0.01
MAX_HALVINGS = 40
#: failure_hint: sigma_min / sigma_max of the kept constraint rows below which a failed run is reported as near a
#: singular configuration (the same ratio as lagrange's hint)
SINGULAR_HINT_RATIO = 1e-3
#: the approach (Minimal.step_limit): where sigma_min / sigma_max of the last two accepted states is below
#: APPROACH_SCREEN and falls, the next step ends APPROACH_FRACTION of the way to where it extrapolates to 0
APPROACH_SCREEN = 0.2
APPROACH_FRACTION = 0.5
#: time step [s] of the central difference of A in Minimal._ratio_rate (error ~ RATE_STEP^2 |A'''|, round-off
#: ~ eps |A| / RATE_STEP: both far below the few per cent the approach needs)
RATE_STEP = 1e-6
_CANNOT_PASS = ("the minimal formulation cannot vouch for its branch there (its dependent coordinates are not "
                "defined where A loses rank, paper 002 Sect. 3.3). Use lagrange, nullspace or projection through "
                "singular configurations.")


class Minimal(Formulation):
    """Voronets equations (12) of paper 002 in y = (s, s'); see the module docstring."""

    name = "minimal"
    passes_singular_configurations = False
    rhs_changes_after_step = True       # a switch changes the chart: DOP853's extra stages are evaluated before it

    def __init__(self, model, *, rank_tol: RankTolerance = RankTolerance(),
                 position_tol: KinematicTolerance = KinematicTolerance()):
        super().__init__(model)
        self.rank_tol, self.position_tol = rank_tol, position_tol
        self._q = np.array(model.q0, float)
        self._v = np.array(model.v0, float)
        self._t = 0.0
        self._rows = np.arange(0)
        self._p, self._s = np.arange(0), np.arange(model.n)
        self.switches = 0
        self._accepted = (0.0, self._q, self._v)    # the last accepted (t, q, v)
        self._start = self._accepted                # the accepted state before it: the start of the last step
        self._failed = None                         # (t, cause) of a stage whose p could not be recovered
        self._poisoned = None                       # (t_new, y_new) of the attempt that stage belonged to
        self._run_rtol = np.inf                     # the run's rtol (set_tolerance)
        self._ratios = []                           # (t, sigma_min / sigma_max, its rate, rank drop) of the last two
        #                                             accepted states (_ratio_rate)
        self._previous = None                   # (t, p, s, rows) of the chart before the last switch

    # ---------------------------------------------------------------- coordinates
    def _choose(self, t, q, v):
        A = self.ws.constraints(t, q, v)[1]
        self._rows = pivoted_qr(A, self.rank_tol).independent_rows if A.shape[0] else np.arange(0)
        self._p, self._s = independent_coordinates(A[self._rows])

    def initial_state(self, t, q, v):
        self._q, self._v, self._t = np.array(q, float), np.array(v, float), float(t)
        if self._previous is None or self._accepted[0] != float(t):    # not a switch at the accepted state
            self._start = (float(t), self._q.copy(), self._v.copy())
        self._accepted = (float(t), self._q.copy(), self._v.copy())
        self._choose(t, q, v)
        return np.concatenate([q[self._s], v[self._s]])

    def split(self, t, y):
        """(q, v) from y = (s, s') at time t, recovering p (Newton on Phi = 0 with s held, continued from the
        accepted state that starts the step containing t: ``_base``). Raises SimulationError, naming the
        time and how near a singular configuration the run is, where p cannot be recovered."""
        try:
            return self._state(t, y)
        except MultibodyError as exc:
            t_acc, q_acc, _ = self._accepted
            raise SimulationError(f"minimal formulation: the dependent coordinates cannot be recovered at t = {t:g} "
                                  f"({exc}). Minimal coordinates are valid only locally (paper 002 Sect. 3.3); the "
                                  f"last accepted state, t = {t_acc:.9g}, is {self._ratio(t_acc, q_acc):.1e} (sigma_min "
                                  "/ sigma_max of the constraint Jacobian) from a singular configuration."
                                  f"{self._hint(t_acc, q_acc)}") from None

    def _state(self, t, y):
        """split without the message: raises MultibodyError where Newton fails."""
        k = len(self._s)
        t0, q, v = self._base(t)
        q, v = q.copy(), v.copy()
        q[self._s], v[self._s] = y[:k], y[k:2 * k]
        if self.ws.m:
            q = self._recover(t, y[:k], self._base(t))
            v = solve_velocities(self.model, q, v, t, given=self._s, ws=self.ws, tol=_NO_CHECK)
        self._q, self._v, self._t = q, v, float(t)
        return q, v

    def _base(self, t):
        """The accepted (t0, q0, v0) the recovery at t continues from: the last accepted state for a stage of the
        step being attempted (t >= its time), the one before it for a state inside the last accepted step (the
        crossing monitor's samples of its dense output). Never a stage of another attempt: a rejected step's stage
        beyond a singular configuration may lie on another assembly branch (double four-bar, dop853 rtol 1e-6 atol
        1e-8: a stage at t = 0.764, past the crossing at 0.714, and the next attempt's first stage at 0.433
        continued from it put the crank angle at 647 rad)."""
        return self._accepted if t >= self._accepted[0] else self._start

    def _recover(self, t, s, base, depth=0):
        """Positions at (t, s) continued from base = (t0, q0, v0) on the branch: Newton from the prediction
        q0 + (t - t0) v0 (s replaced) when its residual is small (PREDICTION_RESIDUAL), else first the midpoint
        of the way (t, s) (continuation; raises MultibodyError where Newton fails)."""
        t0, q0, v0 = base
        pred = q0 + (t - t0) * v0
        pred[self._s] = s
        residual = np.max(np.abs(self.ws.constraints(t, pred, np.zeros_like(pred))[0]), initial=0.0)
        if residual > PREDICTION_RESIDUAL * self.model.length_scale and depth < MAX_HALVINGS:
            tm = 0.5 * (t0 + t)
            qm = self._recover(tm, 0.5 * (q0[self._s] + s), base, depth + 1)
            return self._recover(t, s, (tm, qm, v0), depth + 1)
        return solve_positions(self.model, pred, t, hold=self._s, ws=self.ws, tol=self.position_tol)

    def coordinates(self, t, y):
        """q of y at t; a state before the last coordinate switch (the dense output of the step that ended with
        it, read by simulation.crossings after the switch) is read in the chart it was integrated in."""
        if self._previous is None or t >= self._previous[0]:
            return self.split(t, y)[0]
        current = self._p, self._s, self._rows
        self._p, self._s, self._rows = self._previous[1:]
        try:
            return self.split(t, y)[0]
        finally:
            self._p, self._s, self._rows = current

    def _ratio(self, t, q) -> float:
        """sigma_min / sigma_max of the kept constraint rows at (t, q) (1 without rows)."""
        if len(self._rows) == 0:
            return 1.0
        s = np.linalg.svd(self.ws.constraints(t, q, np.zeros_like(q))[1][self._rows], compute_uv=False)
        return float(s[-1] / s[0]) if s[0] > 0 else 0.0

    def _hint(self, t, q) -> str:
        ratio = self._ratio(t, q)
        if ratio >= SINGULAR_HINT_RATIO:
            return ""
        here = bool(self._ratios) and self._ratios[-1][0] == t
        ahead = self._ahead() if here else None
        ahead = t if ahead is None else ahead
        if here:
            rank = len(self._rows) - self._ratios[-1][3]
        else:
            s = np.linalg.svd(self.ws.constraints(t, q, np.zeros_like(q))[1][self._rows], compute_uv=False)
            rank = int(np.count_nonzero(s > SINGULAR_HINT_RATIO * s[0]))
        return (f" The run is near a singular configuration: a singular configuration at t = {ahead:.9g} (rank "
                f"{rank} of {len(self._rows)}; sigma_min / sigma_max of the constraint Jacobian {ratio:.1e} at the "
                f"last accepted state, t = {t:.9g}, extrapolated to 0); {_CANNOT_PASS}")

    def set_tolerance(self, rtol, atol):
        """The run's tolerances (simulation.step_watch): approaching a singular configuration, the run stops where the
        round-off of p' = -A_p^-1 (A_s s' + Phi_t), eps cond(A_p) >= eps sigma_max / sigma_min, exceeds ROUND_OFF_SHARE
        rtol, once the ratio is below SINGULAR_HINT_RATIO (a long chain starts with eps / ratio above it: 1.3e-14 on
        the N-four-bar with 40 cells): beyond it the error control creeps and collapses (N-four-bar 40 at rtol 1e-12 took minutes of steps
        ~1e-8 s; the double four-bar's dop853 steps at rtol 1e-10 collapsed where eps / ratio was 0.16 rtol)."""
        self._run_rtol = float(rtol)

    @property
    def step_limit(self):
        """The next step's largest size (simulation.step_watch applies it), or None: APPROACH_FRACTION of the time
        to the singular configuration ahead, where sigma_min / sigma_max of the kept rows (below APPROACH_SCREEN)
        falls linearly to 0 at a transversal crossing (paper 000 Sect. 2.5), extrapolated from the last two
        accepted states. The steps then approach it geometrically, no stage lies beyond it (a stage there is
        Newton's pick of an assembly branch: a dop853 step of 0.19 s across the double four-bar's crossing at
        0.7144 was accepted and the crossing located at 0.7158), and the run stops where the ratio reaches the
        rank tolerance (``after_step``), within ~ sqrt(eps) / rate of the crossing, or, where the error control
        collapses the step first (p' carries the round-off eps / sigma_min), with failure_hint naming it."""
        ahead = self._ahead()
        return None if ahead is None else APPROACH_FRACTION * (ahead - self._ratios[-1][0])

    def _ahead(self):
        """Where sigma_min / sigma_max of the last accepted state (below APPROACH_SCREEN and falling) extrapolates to
        0, or None: the earlier of its tangent (:meth:`_ratio_rate`) and the root of its Taylor parabola, with the
        second derivative from the rates at the last two accepted states. The ratio falls faster and faster as a
        crank speeds up towards the crossing, so both are late there (double four-bar from rest, crossing at 0.7144:
        from the dop853 rtol 1e-6 state at 0.403 the tangent reaches 0 at 1.08, the parabola at 0.83), and the
        steps keep APPROACH_FRACTION of the way to it."""
        if not self._ratios:
            return None
        t1, r1, d1, _ = self._ratios[-1]
        if not (r1 < APPROACH_SCREEN and d1 < 0.0):
            return None
        ahead = t1 - r1 / d1
        if len(self._ratios) > 1 and t1 > self._ratios[-2][0]:
            t0, _, d0, _ = self._ratios[-2]
            half_curvature = 0.5 * (d1 - d0) / (t1 - t0)
            if half_curvature < 0.0:        # r1 + d1 h + c h^2 = 0, its positive root (c < 0, d1 < 0, r1 > 0)
                ahead = min(ahead, t1 + (-d1 - np.sqrt(d1 * d1 - 4.0 * half_curvature * r1)) / (2.0 * half_curvature))
        return ahead

    def _ratio_rate(self, t, q, v) -> tuple[float, float, int]:
        """(sigma_min / sigma_max of the kept rows at (t, q), its derivative along the motion q' = v, the rank drop
        ahead): first-order perturbation of simple singular values, d sigma_i = u_i^T dA w_i (Stewart & Sun, Matrix
        Perturbation Theory, Sect. IV.2), with dA/dt by central differences over RATE_STEP (A is smooth where its
        singular values are not: a finite difference of the ratio itself would straddle the kink at a crossing). The
        rank drop counts the singular values whose tangents reach 0 no later than twice the time sigma_min's does
        (those that vanish with it at a crossing: two on the double four-bar, paper 000 Sect. 3.2)."""
        if len(self._rows) == 0:
            return 1.0, 0.0, 0
        rows = lambda t, q: self.ws.constraints(t, q, np.zeros_like(q))[1][self._rows]     # noqa: E731
        U, sv, Wt = np.linalg.svd(rows(t, q), full_matrices=False)
        if sv[0] <= 0.0:
            return 0.0, 0.0, len(sv)
        dA = (rows(t + RATE_STEP, q + RATE_STEP * v) - rows(t - RATE_STEP, q - RATE_STEP * v)) / (2 * RATE_STEP)
        ds = np.einsum("ij,ik,jk->k", dA, U, Wt.T)          # u_i^T dA w_i
        ratio = sv[-1] / sv[0]
        falling = ds < 0.0
        reach = np.where(falling, sv / np.where(falling, -ds, 1.0), np.inf)
        drop = int(np.count_nonzero(reach <= 2.0 * reach[-1])) if falling[-1] else 0
        return float(ratio), float((ds[-1] - ratio * ds[0]) / sv[0]), max(drop, 1)

    def failure_hint(self, t, y) -> str:
        """A sentence appended to a failed run's message (simulation.driver, step_watch) near a singular
        configuration, else "": the singular configuration ahead, where sigma_min / sigma_max of the last two
        accepted states, falling linearly towards a transversal crossing (paper 000 Sect. 2.5), extrapolates to 0,
        and the rank of the constraint rows there (singular values above SINGULAR_HINT_RATIO s_max)."""
        return self._hint(*self._accepted[:2])

    def error_filter(self, t_new, y_new, err):
        """The integrator's local error estimate (integrate.explicit.RungeKutta ``error_filter``), infinite for an
        attempt that had a stage whose dependent coordinates could not be recovered (``rhs``): the step is
        rejected and shrunk by the controller's smallest factor, like a step whose error is too large, instead of
        ending the run; stages beyond a singular configuration are rejected this way until the steps reach it
        (then the crossing monitor or ``after_step`` stops the run, naming it). DOP853 calls this twice per
        attempt (both estimates): the attempt is remembered by (t_new, y_new)."""
        if self._failed is not None:
            self._poisoned, self._failed = (float(t_new), np.array(y_new, float)), None
        if self._poisoned is not None and self._poisoned[0] == t_new and np.array_equal(self._poisoned[1], y_new):
            return np.full_like(err, np.inf)
        return err

    def after_step(self, t, y):
        if self._failed is not None:        # a stage of this accepted step's dense output (DOP853's extra stages)
            t_fail, cause = self._failed
            raise SimulationError(f"model '{self.model.name}': the dependent coordinates of the dense output of the "
                                  f"step from t = {self._accepted[0]:.9g} to {t:.9g} cannot be recovered at t = "
                                  f"{t_fail:.9g} ({cause}).{self._hint(*self._accepted[:2])}")
        q, v = self.split(t, y)
        self._start, self._accepted, self._poisoned = self._accepted, (float(t), q.copy(), v.copy()), None
        ratio, rate, drop = self._ratio_rate(t, q, v)
        self._ratios = (self._ratios + [(float(t), ratio, rate, drop)])[-2:]
        if ratio <= self.rank_tol.rtol:
            s = np.linalg.svd(self.ws.constraints(t, q, v)[1][self._rows], compute_uv=False)
            below = int(np.count_nonzero(s <= self.rank_tol.rtol * s[0]))    # those vanishing with sigma_min: drop
            rank = len(self._rows) - max(below, drop)
            raise SimulationError(f"model '{self.model.name}': a singular configuration at t = {t:.9g} (rank {rank} of "
                                  f"{len(self._rows)}; reached by the step from t = {self._start[0]:.9g}, sigma_min / "
                                  f"sigma_max of the constraint Jacobian {ratio:.1e}, at most the rank tolerance "
                                  f"{self.rank_tol.rtol:.1e}); {_CANNOT_PASS}")
        ahead = self._ahead()
        if ahead is not None and ratio < SINGULAR_HINT_RATIO and EPS / ratio > ROUND_OFF_SHARE * self._run_rtol:
            raise SimulationError(f"model '{self.model.name}': a singular configuration at t = {ahead:.9g} (rank "
                                  f"{len(self._rows) - drop} of {len(self._rows)}; ahead of the accepted state at t = "
                                  f"{t:.9g}, where sigma_min / sigma_max of the constraint Jacobian, {ratio:.1e}, falls "
                                  f"towards 0 and the round-off of the dependent velocities, eps / {ratio:.1e} = "
                                  f"{EPS / ratio:.1e}, exceeds {ROUND_OFF_SHARE:g} rtol = {ROUND_OFF_SHARE * self._run_rtol:g}); "
                                  f"{_CANNOT_PASS}")
        A = self.ws.constraints(t, q, v)[1][self._rows]
        if A.shape[0] == 0:
            return None
        p_best, s_best = independent_coordinates(A)
        if np.array_equal(s_best, self._s):
            return None
        if np.linalg.cond(A[:, self._p]) <= SWITCH_RATIO * np.linalg.cond(A[:, p_best]):
            return None
        self.switches += 1
        self._previous = (float(t), self._p, self._s, self._rows)
        return self.initial_state(t, q, v)

    # ---------------------------------------------------------------- dynamics
    def _solve(self, t, q, v):
        """s'' from (12) and q'' = F s'' + w (paper 002 eqs 10-13)."""
        terms = self.ws.terms(t, q, v)
        A, gamma = terms.A[self._rows], terms.gamma[self._rows]
        F = orthogonal_complement(A, self._s)
        w = np.zeros(self.model.n)
        if len(self._p):
            w[self._p] = np.linalg.solve(A[:, self._p], gamma)
        try:
            sdd = np.linalg.solve(F.T @ terms.M @ F, F.T @ (terms.f - terms.M @ w))
        except np.linalg.LinAlgError:
            raise SimulationError(f"minimal formulation: the projected mass matrix F^T M F is singular "
                                  f"at t = {t:g}.") from None
        return terms, sdd, F @ sdd + w

    def rhs(self, t, y):
        self.nfev += 1
        k = len(self._s)
        try:
            q, v = self._state(t, y)
            sdd = self._solve(t, q, v)[1]
        except (MultibodyError, np.linalg.LinAlgError) as exc:     # rejected by error_filter, see there
            self._failed = (float(t), str(exc))
            return np.concatenate([y[k:2 * k], np.zeros(k)])
        return np.concatenate([y[k:2 * k], sdd])

    def accelerations(self, t, q, v):
        terms, _, vdot = self._solve(t, q, v)
        lam = min_norm_solve(terms.A.T, terms.f - terms.M @ vdot) if self.ws.m else np.zeros(0)
        return Accelerations(vdot, lam, {"minimal_coordinates": [self.model.coordinate_names[i]
                                                                 for i in self._s]})

    def summary(self):
        return {"minimal_coordinates": [self.model.coordinate_names[i] for i in self._s],
                "coordinate_switches": self.switches}
