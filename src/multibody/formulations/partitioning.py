"""Coordinate partitioning in the compact form of paper 001 Sect. 2, with the projective criterion.

State y = [q (n), v_I (k)]: all coordinates and the independent velocities. At a state the
dependent velocities follow from the velocity constraints (eq. 7, ``J_DI`` is the paper's A):

    v = D^T v_I + [0; eta],   eta = -C_D^{-1} Phi_t                                  (7, 9)

and the reduced (constraint-reaction-free) equations of motion are

    M_d v_I' = h_d,   M_d = D M D^T,   h_d = D (f - M [0; xi]),   xi = C_D^{-1} gamma  (12-14)

(our sign convention M q'' + C^T lam = f, C q'' = gamma, so the paper's b is -gamma). The k + n
first-order equations v_I' = M_d^-1 h_d, q' = v are integrated together, as the paper recommends
(end of Sect. 2): no nonlinear solve for q_D inside the right-hand side.

After every accepted step: (1) position correction: Newton on q_D with q_I held keeps Phi = 0
(v_I is untouched, so the velocity constraints hold by construction of v); the local error is
measured on the physical state [q, v] (``error_measure``, issue 12: q_D included, its estimate keeps the Newton
start close, which matters most for driven systems with k = 0, where every coordinate is dependent; and the
rebuilt dependent velocities, whose error the step control did not see on [q, v_I]); (2) the projective
criterion (eq. 23) is re-checked; when the quality of the current set (``Criterion.quality``,
cos^2 alpha of the coordinate for k = 1) falls below ``SwitchPolicy.ratio`` times that of the best
set, the independent coordinates are switched: v_I is re-read from the full velocity, nothing else
changes, so the state stays consistent (paper 001 Sect. 4, last paragraph). With ratio < 1 the switch
back needs the old set to become 1/ratio times better: hysteresis, no chattering at a crossing. That is the rule
"quality" (``SwitchPolicy.rule``); the default "flat" keeps a chart that is flat (its quality constant over the
step) and admissible (its round-off below rtol), and applies the rule "quality" where no chart is flat
(analysis.partition_chart, issue 12: the crank angle of a parallelogram chain, whose reduced mass is constant, instead
of a coupler coordinate that is stationary at the crossings; dop853 at rtol 1e-12: crank-tip error 6.6 -> 0.04 times
the exact reduction's on the double four-bar).
Switches are recorded as (time, old set, new set) in ``summary()["coordinate_switches"]``. (3) A step may not run the
set past its own singular point before that check: an attempt whose stages or end see the set's quality below
partition_guard.QUALITY_FLOOR times the best set's is rejected (:mod:`.partition_guard`; issue 12, loose tolerances).

Redundant constraints: the independent rows are chosen once per partition (pivoted QR) and only
they enter C_D; the multipliers reported for output are the minimum-norm solution, as in
``lagrange``. Singular configurations (rank drop of C): *at* one no partition is admissible (every
k x k block of the reduced equations is singular), but the configuration is met at an isolated
instant, which an adaptive step never lands on; on its way the criterion switches to the coordinates
that stay well conditioned, and the run passes. Measured on the double four-bar (10 s, rtol 1e-6,
crank rate 1 rad/s, passing the singular position every half turn): 20 switches, |Phi| <= 1.1e-15,
final coordinates within 1.2e-4 (m, rad) of the lagrange run (tests/test_partitioning.py compares them). A step
that ends closer to the singular configuration than the rank tolerance fails with SimulationError
naming the time; it does not continue on a guessed partition.
"""
from __future__ import annotations

from dataclasses import dataclass

import numpy as np
import scipy.linalg as sla

from ..analysis.partition import Criterion, Partition, admissible_partition, criterion, set_quality, tangent_matrix
from ..analysis.partition_chart import DEFAULT_RTOL, admissible_floor, choose, is_flat
from ..errors import MultibodyError, SimulationError
from ..kinematics import KinematicTolerance, solve_positions
from ..linalg.rank import RankTolerance, min_norm_solve
from .base import Accelerations, Formulation
from .crossing_window import CrossingWindow
from .partition_guard import PartitionGuard
from .velocity_error import PhysicalStates


@dataclass(frozen=True)
class SwitchPolicy:
    """enabled: re-check the criterion after accepted steps; ratio (0 < ratio <= 1): switch when
    quality(current) < ratio * quality(best) (hysteresis; paper 001 leaves the threshold open);
    metric: "mass" (the projective criterion) or "geometry" (M = I, for comparison); rule: "flat" (an admissible
    flat chart where one exists, else as "quality"; analysis.partition_chart, the same ratio as hysteresis among flat
    charts; issue 12) or "quality" (paper 001 Sect. 4: the best set by eq. 23 alone)."""

    enabled: bool = True
    ratio: float = 0.7
    metric: str = "mass"
    rule: str = "flat"

    def __post_init__(self):
        if not 0 < self.ratio <= 1:
            raise MultibodyError(f"the switching ratio must lie in (0, 1], got {self.ratio}.")
        if self.metric not in ("mass", "geometry"):
            raise MultibodyError(f"unknown criterion metric '{self.metric}' (mass or geometry).")
        if self.rule not in ("flat", "quality"):
            raise MultibodyError(f"unknown switching rule '{self.rule}' (flat or quality).")


class PartitioningEquations(PhysicalStates, Formulation):
    """Paper 001's equations in [q, v_I] (the module docstring); :class:`Partitioning` adds the singular window.

    independent: initial independent coordinates (names or indices); default: the best set by the
    criterion at the initial state."""

    rhs_changes_after_step = True       # a switch gives y[n:] other independent velocities

    name = "partitioning"

    def __init__(self, model, *, independent=None, switching: SwitchPolicy = SwitchPolicy(),
                 rank_tol: RankTolerance = RankTolerance(),
                 projection_tol: KinematicTolerance = KinematicTolerance(max_iterations=10)):
        super().__init__(model)
        self.switching = switching
        self.rank_tol = rank_tol
        self.projection_tol = projection_tol
        self.requested = None if independent is None else [
            model.coordinate_index(c) if isinstance(c, str) else int(c) for c in independent]
        self.part: Partition | None = None
        self.switches: list[dict] = []
        self.initial_set: list[str] = []
        self.last_criterion: Criterion | None = None
        self._phys_memo: list = []
        self.guard = PartitionGuard()
        self._crit_start: Criterion | None = None      # the criterion at the last step's start (partition_chart)
        self.floor = admissible_floor(DEFAULT_RTOL)     # the admissible sets' smallest quality (partition_chart)
        self._flat = False                              # the current set's chart was flat over the last step

    def set_tolerance(self, rtol: float, atol: float) -> None:
        """The run's tolerances (simulation.step_watch.StepWatch): rtol sets the admissibility floor of the rule
        "flat" (analysis.partition_chart.admissible_floor)."""
        self.floor = admissible_floor(rtol)

    # ------------------------------------------------------------------ state
    def initial_state(self, t, q, v):
        C = self.ws.constraints(t, q, v)[1]
        base = admissible_partition(C, self.rank_tol)
        if self.requested is not None:
            k = self.model.n - len(base.rows)
            if len(set(self.requested)) != k:
                raise MultibodyError(f"model '{self.model.name}' has {k} degrees of freedom; give "
                                     f"{k} distinct independent coordinates, got {self.requested}.")
            self.part = Partition.from_independent(self.model.n, self.requested, base.rows)
            tangent_matrix(C, self.part)        # raises if the requested set is inadmissible here
        else:
            self.part = self._criterion(t, q, C, base).best_partition()
        self._crit_start = self._criterion(t, q, C, self.part) if self.switching.enabled else None
        self._guard_from(self._crit_start)
        self.initial_set = self.part.names(self.model)
        return np.concatenate([q, v[list(self.part.independent)]])

    def split(self, t, y):
        n = self.model.n
        q = y[:n]
        return q, self._velocity(t, q, y[n:])[0]

    def _velocity(self, t, q, v_I):
        """Full v (n,) from v_I (eqs 7, 9), with C (m, n) and the partition's D, J_DI, C_D."""
        _, C, Phi_t, _ = self.ws.constraints(t, q, np.zeros(self.model.n))
        try:
            D, J_DI = tangent_matrix(C, self.part)
        except MultibodyError as exc:
            raise SimulationError(f"t = {t:g}: independent coordinates {self.part.names(self.model)}: "
                                  f"{exc} Enable switching or choose other coordinates.") from None
        rows, dep = list(self.part.rows), list(self.part.dependent)
        v = D.T @ v_I
        if dep:
            v[dep] -= sla.solve(C[np.ix_(rows, dep)], Phi_t[rows])         # eta, eq. 7
        return v, D, C

    # ------------------------------------------------------------------ dynamics
    def _reduced(self, t, q, v_I):
        """v (n,), q'' (n,), v_I' (k,) from eqs 7-14."""
        v, D, C = self._velocity(t, q, v_I)
        terms = self.ws.terms(t, q, v)
        rows, dep = list(self.part.rows), list(self.part.dependent)
        base = np.zeros(self.model.n)                                       # [0; xi], eq. 10
        if dep:
            base[dep] = sla.solve(C[np.ix_(rows, dep)], terms.gamma[rows])
        k = D.shape[0]
        if k:
            Md = D @ terms.M @ D.T                                          # eq. 13
            hd = D @ (terms.f - terms.M @ base)                             # eq. 14
            vdot_I = sla.solve(Md, hd, assume_a="pos", check_finite=False)  # eq. 12
            self.guard.stage(t, set_quality(terms.M, Md, self.part.independent))
        else:
            vdot_I = np.zeros(0)
        return v, D.T @ vdot_I + base, vdot_I, terms

    def error_measure(self, t_old, y_old, t_new, y_new, err):
        """The local error of the physical state [q, v] and its end states (integrate.explicit.RungeKutta's
        ``error_measure``; issue 12): the error is measured where it is made. The dependent velocities follow from
        q and v_I through the dependent block (eqs 7, 9: v = D(q)^T v_I + [0; eta(q)]), so an error dq of the
        positions moves them by (dv_D/dq) dq, which grows like 1/s_min(C_D); measured on [q, v_I] it was unseen
        (N-four-bar with 10 cells, dop853, rtol 1e-10: tip 2.1e-6 m against lagrange's 1.6e-7, energy drift 9.8e-9
        against 4.1e-10). Here [dq, dv] = split(y_new) - split(y_new - err): the first-order change of the physical
        state, whatever its cause (closing's [q_I, v_I] too: q_D = g(q_I, t), eq. 27 of paper 001). A state of the
        singular window's layout [q, v] is measured as it is."""
        if y_new.shape[0] == 2 * self.model.n:
            return err, y_old, y_new
        if not self.guard.holds(t_old, t_new, lambda: self._set_quality(t_new, y_new[:self.model.n])):
            return self.guard.reject(y_old, y_new), y_old, y_new     # the set degraded inside the attempt
        p_new, p_old = self._physical(t_new, y_new), self._physical(t_old, y_old)
        return p_new - np.concatenate(self.split(t_new, y_new - err)), p_old, p_new

    def rhs(self, t, y):
        """[v, v_I'] (eqs 7-14). A guarded stage (formulations.partition_guard) where C_D is singular records quality 0
        and returns zeros: its attempt is rejected, the run goes on with a shorter step."""
        self.nfev += 1
        n = self.model.n
        try:
            v, _, vdot_I, _ = self._reduced(t, y[:n], y[n:])
        except SimulationError:
            if self.guard.reference is None:
                raise
            self.guard.stage(t, 0.0)
            return np.zeros_like(y)
        return np.concatenate([v, vdot_I])

    def accelerations(self, t, q, v):
        v_I = v[list(self.part.independent)]
        _, vdot, _, terms = self._reduced(t, q, v_I)
        lam = min_norm_solve(terms.A.T, terms.f - terms.M @ vdot)
        return Accelerations(vdot, lam, {"independent": self.part.names(self.model),
                                         "multipliers": "minimum-norm"})

    # ------------------------------------------------------------------ after a step
    def after_step(self, t, y):
        """Switch the independent coordinates if the criterion asks for it (at the step's q, before the
        projection: next to a singular configuration the old set's dependent block C_D is nearly singular, and
        a projection holding the old set would move the dependent coordinates by ~ |Phi| / s_min), then
        project the dependent coordinates onto Phi = 0 holding the (new) independent ones (paper 001)."""
        n = self.model.n
        q, v_I = y[:n].copy(), y[n:]
        if self.switching.enabled and self.part.independent:
            v_I = self._maybe_switch(t, q, v_I)
        if self.ws.m:
            try:
                q = solve_positions(self.model, q, t, hold=self.part.independent, ws=self.ws,
                                    tol=self.projection_tol)
            except MultibodyError as exc:
                raise SimulationError(f"position correction failed at t = {t:g}: {exc}") from None
        return np.concatenate([q, v_I])

    def _maybe_switch(self, t, q, v_I):
        v, _, C = self._velocity(t, q, v_I)
        if not self._switch(t, self._criterion(t, q, C, self.part)):
            return v_I
        return v[list(self.part.independent)]

    def _switch(self, t, crit, trend: bool = True) -> bool:
        """Switch to the set of ``crit`` that SwitchPolicy.rule picks: an admissible flat chart over the last step
        (analysis.partition_chart.choose, from the criterion at the step's start, with the floor of the run's rtol;
        behind a singular window, ``trend`` False, the flat set chosen before it while admissible), or, for the rule
        "quality" and where no chart is flat, the best set if the current one's quality is below SwitchPolicy.ratio
        times the best's (paper 001 Sect. 4); then guard the
        next step (formulations.partition_guard; ``trend``: the last step's stages were this formulation's, so their
        quality extrapolates). True if switched."""
        start, self._crit_start = (self._crit_start if trend else None), crit
        current = tuple(self.part.independent)
        flat_rule = self.switching.rule == "flat"
        if flat_rule and start is not None:
            best = choose(start, crit, current, self.switching.ratio, self.floor)
            self._flat = is_flat(start, crit, best, self.floor)
        elif flat_rule and self._flat and crit.quality(current) >= self.floor:
            best = current                              # behind a window: the flat chart chosen before it
        else:
            best, self._flat = crit.best(), False
            best = best if crit.quality(current) < self.switching.ratio * crit.quality(best) else current
        switched = best != current
        if switched:
            old = self.part.names(self.model)
            self.part = Partition.from_independent(self.model.n, best, self.part.rows)
            self.switches.append({"t": float(t), "old": old, "new": self.part.names(self.model)})
        self._guard_from(crit)
        self.guard.predict(t, crit.quality(self.part.independent) if trend and not switched else None,
                           crit.quality(crit.best()), self.switching.ratio)
        return switched

    def _set_quality(self, t, q):
        """analysis.partition.set_quality of the current set at q (eq. 13's M_d from eq. 9's D)."""
        C = self.ws.constraints(t, q, np.zeros(self.model.n))[1]
        try:
            D = tangent_matrix(C, self.part)[0]
        except MultibodyError:
            return 0.0
        M = self.model.mass(q)
        return set_quality(M, D @ M @ D.T, self.part.independent)

    def _guard_from(self, crit):
        """The next steps are guarded against the current set's degradation relative to the best set of ``crit``, or,
        for a set worse than SwitchPolicy.ratio times the best (a requested one at the start), relative to its own
        quality over the ratio (None, or switching disabled: unguarded)."""
        if crit is None or not self.switching.enabled or crit.k == 0:
            self.guard.start(None)
            return
        self.guard.start(min(crit.quality(crit.best()), crit.quality(self.part.independent) / self.switching.ratio))

    def _criterion(self, t, q, C, part):
        """The criterion (eq. 23) at q; a run whose independent rows ``part.rows`` lost rank there (C M^-1 C^T of
        eq. 15 singular) stops with SimulationError naming the time."""
        M = np.eye(self.model.n) if self.switching.metric == "geometry" else self.model.mass(q)
        try:
            self.last_criterion = criterion(M, C, part, self.rank_tol, metric=self.switching.metric)
        except SimulationError:
            raise
        except MultibodyError as exc:
            raise SimulationError(f"partitioning at t = {t:.9g}: the projective criterion failed: {exc}") from None
        return self.last_criterion

    # ------------------------------------------------------------------ output
    def coordinates(self, t, y):
        """q (n,) of the state y."""
        return y[:self.model.n]

    def channels(self, t, y):
        n = self.model.n
        q = self.coordinates(t, y)
        C = self.ws.constraints(t, q, np.zeros(n))[1]
        crit = self._criterion(t, q, C, self.part)
        flags = np.zeros(n)
        flags[list(self.part.independent)] = 1.0
        names = self.model.coordinate_names
        return {"cos2_alpha": (crit.cos2_alpha, names), "independent": (flags, names)}

    def summary(self):
        return {"coordinate_switches": list(self.switches), "independent_initial": self.initial_set,
                "independent_final": self.part.names(self.model) if self.part else [],
                "switching_ratio": self.switching.ratio, "criterion_metric": self.switching.metric,
                "partition_guard_rejections": self.guard.rejected}


class Partitioning(CrossingWindow, PartitioningEquations):
    """``--formulation partitioning``: paper 001's equations (the module docstring) with the singular window of
    :mod:`.crossing_window`: near a singular configuration, where every dependent block C_D is singular, the
    lagrange equations carry [q, v]; behind it the best coordinates by the criterion take over."""

    def set_tolerance(self, rtol: float, atol: float) -> None:
        """The run's tolerances: the singular window's size (crossing_window) and the admissibility floor."""
        CrossingWindow.set_tolerance(self, rtol, atol)
        PartitioningEquations.set_tolerance(self, rtol, atol)

    @property
    def step_limit(self):
        """The longest next step (simulation.step_watch): the crossing window's (crossing_window._resolved_step) and,
        outside a window, the partition guard's prediction (formulations.partition_guard)."""
        limits = [x for x in (self._crossing_limit, None if self._in_window else self.guard.limit) if x is not None]
        return min(limits, default=None)

    @step_limit.setter
    def step_limit(self, value):
        self._crossing_limit = value

    def _layout(self, t, q, v):
        return np.concatenate([q, v[list(self.part.independent)]])

    def _window_step(self, t, q, v):
        pass

    def _resume(self, t, q, v):
        """[q, v_I] behind a singular window; the independent coordinates switched by the run's policy (the
        projective criterion, eq. 23, with SwitchPolicy.ratio: as after any step)."""
        if self.part.independent and self.switching.enabled:
            self._switch(t, self._criterion(t, q, self.ws.constraints(t, q, v)[1], self.part), trend=False)
        return self._layout(t, q, v)

    def channels(self, t, y):
        """As outside; inside the window next to the singular configuration, where C M^-1 C^T of the criterion is
        singular (no partition is admissible there), cos^2 alpha is NaN."""
        try:
            return super().channels(t, y)
        except MultibodyError:
            if not self._windowed(y):
                raise
        n, names = self.model.n, self.model.coordinate_names
        flags = np.zeros(n)
        flags[list(self.part.independent)] = 1.0
        return {"cos2_alpha": (np.full(n, np.nan), names), "independent": (flags, names)}
