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
picks the branch after it by round-off. The error control sees only s, and the continuation starts from the last
recovered state, which may be a rejected step's stage beyond the crossing: a run then went on with p on another
assembly (measured on the double four-bar, dop853 rtol 1e-6 atol 1e-8, default kernel: bar1 and bar3 horizontal,
bar5 at 57 deg and the crank angle at 647 rad, t = 0.43, before the exact crossing at 0.714). Recovering from the
last accepted state instead was tried and let the crossing monitor miss the first crossing under Prescott. The run
therefore stops, naming the time and the rank, at the first of:

- at an accepted state whose kept rows have lost rank by the formulation's rank tolerance (sigma_min /
  sigma_max <= sqrt(eps), linalg.rank.RankTolerance: p' is undetermined to working precision there);
- at a crossing located between two accepted states (simulation.crossings, ``passes_singular_configurations``);
- and a failure on the way (the step size collapsing where the round-off of p' outgrows rtol, Newton failing to
  recover p) says how near a singular configuration the last accepted state was (``failure_hint``).
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
_CANNOT_PASS = ("the minimal formulation cannot vouch for its branch there (its dependent coordinates are not "
                "defined where A loses rank, paper 002 Sect. 3.3). Use lagrange, nullspace or projection through "
                "singular configurations.")


class Minimal(Formulation):
    """Voronets equations (12) of paper 002 in y = (s, s'); see the module docstring."""

    name = "minimal"
    passes_singular_configurations = False

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
        self._previous = None                   # (t, p, s, rows) of the chart before the last switch

    # ---------------------------------------------------------------- coordinates
    def _choose(self, t, q, v):
        A = self.ws.constraints(t, q, v)[1]
        self._rows = pivoted_qr(A, self.rank_tol).independent_rows if A.shape[0] else np.arange(0)
        self._p, self._s = independent_coordinates(A[self._rows])

    def initial_state(self, t, q, v):
        self._q, self._v, self._t = np.array(q, float), np.array(v, float), float(t)
        self._accepted = (float(t), self._q.copy(), self._v.copy())
        self._choose(t, q, v)
        return np.concatenate([q[self._s], v[self._s]])

    def split(self, t, y):
        """(q, v) from y = (s, s') at time t, recovering p (Newton on Phi = 0 with s held, continued from
        the last recovered state) and p'."""
        k = len(self._s)
        q, v = self._q.copy(), self._v.copy()
        q[self._s], v[self._s] = y[:k], y[k:2 * k]
        if self.ws.m:
            q = self._recover(t, y[:k])
            v = solve_velocities(self.model, q, v, t, given=self._s, ws=self.ws, tol=_NO_CHECK)
        self._q, self._v, self._t = q, v, float(t)
        return q, v

    def _recover(self, t, s, depth=0):
        """Positions at (t, s) continued from the last recovered state (t0, q0, v0): Newton from the
        prediction q0 + (t - t0) v0 (s replaced) when its residual is small (PREDICTION_RESIDUAL),
        else first the midpoint of the way."""
        pred = self._q + (t - self._t) * self._v
        pred[self._s] = s
        residual = np.max(np.abs(self.ws.constraints(t, pred, np.zeros_like(pred))[0]), initial=0.0)
        if residual > PREDICTION_RESIDUAL * self.model.length_scale and depth < MAX_HALVINGS:
            tm, sm = 0.5 * (self._t + t), 0.5 * (self._q[self._s] + s)
            self._q, self._t = self._recover(tm, sm, depth + 1), tm
            return self._recover(t, s, depth + 1)
        try:
            return solve_positions(self.model, pred, t, hold=self._s, ws=self.ws, tol=self.position_tol)
        except MultibodyError as exc:
            t_acc, q_acc, _ = self._accepted
            raise SimulationError(f"minimal formulation: the dependent coordinates cannot be recovered at t = {t:g} "
                                  f"({exc}). Minimal coordinates are valid only locally (paper 002 Sect. 3.3); the "
                                  f"last accepted state, t = {t_acc:.9g}, is {self._ratio(t_acc, q_acc):.1e} (sigma_min "
                                  "/ sigma_max of the constraint Jacobian) from a singular configuration."
                                  f"{self._hint(t_acc, q_acc)}") from None

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
        if self._ratio(t, q) >= SINGULAR_HINT_RATIO:
            return ""
        return (f" The run is near a singular configuration at t = {t:.9g} (sigma_min / sigma_max of the "
                f"constraint Jacobian {self._ratio(t, q):.1e}): {_CANNOT_PASS}")

    def failure_hint(self, t, y) -> str:
        """A sentence appended to a failed run's message (simulation.driver, step_watch) near a singular
        configuration, else ""."""
        return self._hint(*self._accepted[:2])

    def after_step(self, t, y):
        q, v = self.split(t, y)
        t_before, self._accepted = self._accepted[0], (float(t), q.copy(), v.copy())
        ratio = self._ratio(t, q)
        if ratio <= self.rank_tol.rtol:
            raise SimulationError(f"model '{self.model.name}': a singular configuration was reached by the step from "
                                  f"t = {t_before:.9g} to {t:.9g} (sigma_min / sigma_max of the constraint Jacobian "
                                  f"{ratio:.1e}, at most the rank tolerance {self.rank_tol.rtol:.1e}); {_CANNOT_PASS}")
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
        q, v = self.split(t, y)
        return np.concatenate([y[k:2 * k], self._solve(t, q, v)[1]])

    def accelerations(self, t, q, v):
        terms, _, vdot = self._solve(t, q, v)
        lam = min_norm_solve(terms.A.T, terms.f - terms.M @ vdot) if self.ws.m else np.zeros(0)
        return Accelerations(vdot, lam, {"minimal_coordinates": [self.model.coordinate_names[i]
                                                                 for i in self._s]})

    def summary(self):
        return {"minimal_coordinates": [self.model.coordinate_names[i] for i in self._s],
                "coordinate_switches": self.switches}
