"""Singular configurations and redundant rows in the generalized-alpha integrator (issue 12; paper 000 Sects 2.5, 3):
which Newton solve a step takes, and the check that the run stays on its assembly branch.

Which solve. A model whose constraint Jacobian A has redundant rows at its start (rank below m: the modified
four-bars, the redundant pendulum of paper 000 eq. 29d) takes every step with the rank-revealing solve of
:mod:`.generalized_alpha_rank` (minimum-norm multipliers). Any other model takes the regular one (compiled band LU,
SuperLU or dense LU; unchanged); when that fails (a singular iteration matrix, Newton not converging, or, at fixed
steps, accelerations that alternate: GeneralizedAlpha._alternating, the round-off of a weak direction) on a model
that can reach a singular configuration (not proved full rank everywhere by analysis.structural_rank: open chains
and trees are, and never pay anything here), the same step is tried with the rank-revealing solve before it is
halved; once a step pinned a direction, the following steps take the rank-revealing solve until it keeps every
direction again (the window closes where the rank path itself decides, not where the regular solve happens to
converge through the round-off of a weak direction). Why this works whatever the step grid: next to a crossing at t* the regular solve is regular while
sigma_r / sigma_1 of A stays above its round-off limits (the band LU's pivot test, ~1e-7; the Newton increments'
~3e-18 L / rho) and converges there, on the branch the prediction is on (the two branches' solutions are ~|t - t*|
apart, the prediction O(h^3) off its own); a grid point on t*, where the matrix is singular, or within the round-off
limits, gets the rank-revealing solve, which pins the vanishing direction (the scheme's prediction there, which
continues the incoming motion) and is regular at t* itself. Measured: N-four-bar with 10 cells, h = 1e-4: before,
Newton stopped at t = 0.720267 (sigma_r / sigma_1 = 1.2e-5, |lambda| = 7e5: the residual's round-off 4.5e-10 was
above the balance test's 1e-10 of the forces; the test now admits the residual's own round-off,
generalized_alpha_rank.roundoff_floor); double four-bar with a grid point on t*: "iteration matrix is singular".

The branch (paper 000 Sect. 3: the branches meet at q* with different tangents, the run must keep the one that
continues the incoming motion). Every accepted step of a model that can cross is checked against a limit derived from
the scheme; norms are max_i w_i |x_i| with w = sqrt(diag M) (as simulation.step_watch.branch_move weighs velocities).

- On the branch. For a smooth motion the accelerations of Chung & Hulbert's scheme approximate the exact ones at
  t_n + (alpha_m - alpha_f) h to O(h^2) (Chung & Hulbert 1993: second order in a), so a_n+1 - a_n = h j + O(h^2),
  j = d^3 q / dt^3; for the index-3 equations Arnold & Bruels (2007, Sect. 3) add a transient in a and lambda of size
  O(h) that the scheme damps by rho_inf per step (the start, a restart, a switch between the regular and the pinned
  solve). Hence the change per step |a_n+1 - a_n| = h Q, Q = |j|, changes from one step to the next by a factor
  1 + O(h omega) (a decaying transient only shrinks), omega = sqrt(Q / S) the motion's rate, S the speed |v|.
- Off the branch. A Newton solve that converged on the other branch's point at t_n+1 = t* + d moved q by |dv| d (dv
  the difference of the branches' tangent velocities, ~S sin phi, phi their angle), and the scheme maps a position
  change into an acceleration change by beta' = (1 - alpha_m) / (h^2 beta (1 - alpha_f)) (module generalized_alpha):
  |a_n+1 - a_n| = K |dv| d / h^2, K = (1 - alpha_m) / (beta (1 - alpha_f)) (3.97 at rho_inf = 0.9).
- The limit. The two differ by the factor (K sin phi) (d / h) / (h omega)^2. The limit sits in the middle on a log
  scale, a factor 1 / (h omega) above the on-branch change and below the off-branch one: |a_n+1 - a_n| <= S omega =
  sqrt(Q_n S_n), with Q_n = |a_n - a_n-1| / h_n of the last accepted step (the motion's own scale of j), or |a_n|
  where that is larger (a motion whose j passes zero: the change per step of a smooth motion stays below h omega
  times its acceleration too). Only the accepted state's a_n, v_n enter (a step on the other branch jumps v_n+1 and
  a_n+1 as well). Margins: on the branch 1 / (h omega); measured next to the four-bars' crossings (sigma_r /
  sigma_1 < 1e-2) 167-168 at h = 1e-3 (98 on the 2x2) and 1625 at h = 1e-4, 62-73 and 356 with a grid point on
  t* (the switch to the pinned solve and back: docs/guide/singular.md); off it a switch is caught when
  d / h > h omega / (K sin phi), i.e. unless the other branch's point is within a fraction ~h omega of the step from
  t*, where it lies within ~h^2 omega S / K of this branch's, the order of the step's own correction h^3 Q. No tuned
  constant: the limit follows from h (through Q_n) and the motion (S, a, j).

Which steps can reach the other branch (replaces the argued screen sigma_r / sigma_1 < 1e-2 of the tenth session).
Along the singular triplet (sigma_i, w_i, u_i) of A the row w_i^T Phi is, to second order, sigma_i x + c_i x^2 / 2
in the distance x along u_i (c_i = w_i^T Phi_qq[u_i, u_i]): its two roots, this branch's and the other's, lie
2 sigma_i / |c_i| apart with the vertex halfway, and Newton on that quadratic converges to the root on the side of the
vertex its start lies on (the prediction). A step can therefore converge on the other branch's point only

- if its solve pinned or released a direction (generalized_alpha_rank: the pinned direction's position is the
  prediction, not a root; a release imposes the row from a prediction that drifted while it was pinned), or
- if the prediction's error reaches a vertex: sigma_i <= |c_i| e, e = limit / (beta' min w) the largest position
  error whose acceleration change the limit admits on the branch (``reach``; c_i by central differences of A).

A step above the limit stops the run with the time and the cause only there; elsewhere the other branch's point is
beyond Newton's reach and the same jump is a motion the step does not resolve, which the fixed-step halving and the
error control deal with. No constant: sigma_i, c_i from A at the step, e from the limit and h. Measured (double
four-bar): the regular step 1e-3 s before t* (h = 1e-3, sigma_r / sigma_1 = 3e-4) reaches 0.0064 of the nearest
vertex, the step 4e-5 s after t* at h = 1e-4 0.0005; the grid point on t* (h = t* / 714) pins, and would reach 3.2.

Releasing pinned directions. A pinned direction's position is the scheme's prediction, step after step; it drifts from
its row by x (the row w^T Phi = sigma x is not imposed), and the step that keeps the direction again imposes it at
once: q moves by x, and through beta' ~ 4 / h^2 the accelerations by beta' x. On the N-four-bar with 40 cells at
h = 1e-4 the 40 directions pinned at its crossings drift by up to x = 4.2e-7 m in the 2.8 ms of the window, and the
release changed the accelerations by 107, then 1e3 (size 23; before: the run stopped at t = 0.724403). The drift is
an error of the positions along the pinned direction, not a motion: the step that releases directions keeps its
positions (they satisfy every kept row) and restarts the scheme there (``_release``: v projected onto the kept rows'
velocity constraints in the M-norm, a and lambda from the index-1 equations of the kept rows with the still pinned
directions' reaction carried, generalized_alpha_rank.consistent_state), as after a halved step, but with
abar = a + (abar_n - a_n): the scheme's abar approximates a at t + (alpha_m - alpha_f) h (Arnold & Bruels 2007, Sect.
3), and the last accepted step's offset abar_n - a_n is that shift to O(h^2), where abar = a is O(h) off (measured at
N = 40, h = 1e-4: crank-tip error at t = 2.6 s 6.3e-7 m with abar = a, 3.3e-7 m with the offset, N = 10 2.6e-7 m). Its
correction is vouched by the quadratic above: its component x_i along each released u_i must stay below the vertex,
|x_i| |c_i| < sigma_i, or the run stops (measured at N = 40, h = 1e-4: at most 3.0e-7 of the vertex;
``max_release_reach`` in the summary). The crossings themselves are reported by the run's crossing monitor
(simulation.crossings: ``singular_crossings``), as for every integrator.
"""
from __future__ import annotations

import numpy as np

from .explicit import IntegrationError
from .generalized_alpha_rank import consistent_state, generic_rank, rank_attempt


class CrossingGuard:
    """The choice of solve and the branch check of one GeneralizedAlpha run (module doc); None when the model has no
    constraint rows or A has full row rank at every configuration (nothing to do)."""

    def __init__(self, stepper):
        self.stepper, ws, model = stepper, stepper.ws, stepper.model
        A = ws.constraints(stepper.t, stepper.y[: model.n], stepper.y[model.n:])[1]
        self.generic = generic_rank(A)
        self.redundant = self.generic < ws.m
        self.weights = None
        self.rank_steps = self.pinned_steps = self.releases = 0
        self.max_release = 0.0              # the largest reach of a release's correction (_release)
        self.force = None                   # the reaction A^T lambda + carried of the last accepted step
        self.kept = self.generic            # the directions it kept (_release)
        self.pending = None, self.generic   # both of the last tried step (vouch accepts them)
        self.pinning = False                # inside a window of pinned steps (attempt)
        self.window_h = np.inf              # the shortest step tried in that window (its noise floor, attempt)
        self.kernel = None                  # the compiled rank-revealing Newton loop (adopt)
        self.rate = self.max_jump = 0.0     # Q_n of the last accepted step; the largest change / limit (vouch)

    def adopt(self, attempt):
        """The stepper's regular compiled Newton loop: ``attempt`` (a generalized_alpha_kernels.CompiledAttempt, or
        None), None for a model with redundant rows (every step rank-revealing); the rank-revealing steps take one
        compiled call (generalized_alpha_rank_kernels) with the model arrays of ``attempt`` where it is not None."""
        if attempt is not None:
            from .generalized_alpha_rank_kernels import CompiledRankAttempt
            self.kernel = CompiledRankAttempt(attempt)
        return None if self.redundant else attempt

    @staticmethod
    def make(stepper):
        """The guard of ``stepper``, or None (no rows, or full row rank everywhere: open chains and trees)."""
        from ..analysis.structural_rank import full_row_rank_on_manifold
        if not stepper.ws.m or full_row_rank_on_manifold(stepper.model, stepper.ws):
            return None
        return CrossingGuard(stepper)

    def attempt(self, h: float):
        """(y, a, abar, lambda) of one step, or None (module doc: which solve)."""
        st = self.stepper
        if not (self.redundant or self.pinning):
            try:
                out = st._regular_attempt(h)
            except IntegrationError:            # a singular iteration matrix: a grid point on (or next to) t*
                out = None
            if out is not None and (st.adaptive or not st._alternating(out[1])):
                self.pending = None, self.generic
                return out
        force = self.force
        if force is None:
            A = st.ws.constraints(st.t, st.y[: st.n], st.y[st.n:])[1]
            force = A.T @ st.lam
        floor_h = min(h, self.window_h) if self.pinning else h      # inside a window: its shortest step's floor
        out = self._rank_attempt(h, np.asarray(force, float), floor_h)
        if out is None:
            return None
        self.rank_steps += 1
        self.pinned_steps += out[4] < self.generic
        if out[4] > self.kept:                      # directions released: a consistent restart there (_release)
            out = self._release(h, out, force)
        self.pinning = out[4] < self.generic        # stay with the pinned solve until it keeps every direction
        self.window_h = floor_h if self.pinning else np.inf
        self.pending = out[5], out[4]
        return out[:4]

    def _release(self, h: float, out, force: np.ndarray):
        """The step ``out`` of rank_attempt that keeps directions the last accepted step pinned, restarted at its
        positions (module doc: releasing pinned directions): v, a and lambda consistent with the kept rows
        (generalized_alpha_rank.consistent_state), abar = a + (abar_n - a_n); its correction vouched by reach."""
        st, n = self.stepper, self.stepper.n
        q = out[0][:n]
        reach = self.reach(st.t + h, q, out[0][n:], q - self._prediction(h))[1]
        if reach >= 1.0:
            raise IntegrationError(
                f"generalized-alpha: at t = {st.t + h:.9g}, releasing directions pinned next to a singular configuration, "
                f"the step's correction reached {reach:.3g} of the distance to the vertex sigma_i / |c_i| "
                "between this branch and the other: the run cannot vouch for its assembly branch there.")
        self.max_release = max(self.max_release, reach)
        v, a, lam, reaction = consistent_state(st, st.t + h, q, out[0][n:], out[4], force, self.generic)
        self.releases += 1
        return np.concatenate([q, v]), a, a + (st.abar - st.a), lam, out[4], reaction

    def _rank_attempt(self, h: float, force: np.ndarray, floor_h: float):
        """rank_attempt compiled where it can be (compile), else the NumPy reference; a failed SVD of the compiled
        call (numba's gesdd not converging) takes the step with the reference, whose SVD falls back to gesvd."""
        if self.kernel is not None:
            try:
                return self.kernel(self.stepper, h, force, self.generic, floor_h)
            except np.linalg.LinAlgError:
                pass
        return rank_attempt(self.stepper, h, force, self.generic, floor_h=floor_h)

    def vouch(self, h: float, out) -> None:
        """Raise IntegrationError if the step (h, out = (y, a, abar, lambda)) may have left the branch: its change of
        the accelerations exceeds branch_limit (module doc) at a step that can reach another branch (module doc: which
        steps): its solve pinned or released a direction, or the other branch's point lies within the prediction
        error the limit admits (reach)."""
        st = self.stepper
        n = st.n
        w = self._weights(out[0][:n])
        change, limit = float(np.max(w * np.abs(out[1] - st.a))), self.branch_limit(w)
        chose = self.pending[1] < self.generic or self.pending[1] > self.kept     # pinned or released
        self.force, self.kept = self.pending
        self.max_jump = max(self.max_jump, change / max(limit, np.finfo(float).tiny))
        if change > limit:
            rho, within = self.reach(st.t + h, out[0][:n], out[0][n:], limit / (self._beta_p(h) * float(np.min(w))))
            if chose or within >= 1.0:
                raise IntegrationError(
                    f"generalized-alpha: at t = {st.t + h:.9g}, next to a singular configuration (sigma_r / sigma_1 = "
                    f"{rho:.2g}{', a direction pinned or released' if chose else ''}), the step changed the "
                    f"accelerations by {change / max(limit, 1e-300):.3g} times the limit sqrt(|q'''| |v|) of the "
                    "motion: the run cannot vouch for its assembly branch there.")
        self.rate = change / h

    def reach(self, t: float, q: np.ndarray, v: np.ndarray, e) -> tuple:
        """(sigma_r / sigma_1, max_i |c_i| e_i / sigma_i) at (t, q) over the generic rank's singular triplets
        (sigma_i, w_i, u_i) of A: c_i = w_i^T Phi_qq[u_i, u_i] the curvature of the row w_i^T Phi along u_i (central
        differences of A, step sqrt(eps) max(|q|, L)); the second is >= 1 where a prediction error e_i along u_i (a
        number, or a vector of positions whose component along u_i is taken) reaches the vertex sigma_i / |c_i| of that
        row, beyond which Newton converges to the other branch's point (module doc). Only the kept directions after
        ``self.kept`` when e is a vector (the released ones, _release)."""
        U, s, Vt = np.linalg.svd(self._dense_A(t, q, v), full_matrices=False)
        if not self.generic or s[0] <= 0:
            return 1.0, 0.0
        rows = range(self.generic) if np.ndim(e) == 0 else range(self.kept, min(self.generic, len(s)))
        d = np.sqrt(np.finfo(float).eps) * max(float(np.max(np.abs(q))), self.stepper.model.length_scale)
        worst = 0.0
        for i in rows:      # not the hot path: a step above the limit, or a release (a few per crossing)
            u = Vt[i]
            c = U[:, i] @ ((self._dense_A(t, q + d * u, v) - self._dense_A(t, q - d * u, v)) @ u) / (2 * d)
            ei = e if np.ndim(e) == 0 else abs(float(u @ e))
            worst = max(worst, abs(c) * ei / max(s[i], np.finfo(float).tiny))
        return float(s[self.generic - 1] / s[0]), worst

    def _prediction(self, h: float) -> np.ndarray:
        """q_n+1 of the scheme's predictor (a_n+1 = a_n; generalized_alpha._regular_attempt)."""
        st, p = self.stepper, self.stepper.par
        q, v = st.y[: st.n], st.y[st.n:]
        return q + h * v + h * h * ((0.5 - p.beta) * st.abar + p.beta * st._algorithmic(st.a))

    def _dense_A(self, t, q, v) -> np.ndarray:
        A = self.stepper.ws.constraints(t, q, v)[1]
        return np.asarray(A.toarray() if hasattr(A, "toarray") else A, float)

    def _beta_p(self, h: float) -> float:
        """beta' = (1 - alpha_m) / (h^2 beta (1 - alpha_f)): an acceleration change per position change of a step."""
        p = self.stepper.par
        return (1 - p.alpha_m) / (h * h * p.beta * (1 - p.alpha_f))

    def branch_limit(self, w: np.ndarray) -> float:
        """max(sqrt(Q_n S_n), |a_n|) (module doc: the limit): Q_n the last accepted step's change of the accelerations
        per unit time, S_n and a_n the speed and the accelerations of the accepted state (weighted by w)."""
        st = self.stepper
        speed = float(np.max(w * np.abs(st.y[st.n:])))
        return max(float(np.sqrt(self.rate * speed)), float(np.max(w * np.abs(st.a))))

    def _weights(self, q) -> np.ndarray:
        model = self.stepper.model
        if self.weights is not None:
            return self.weights
        w = np.sqrt(np.clip(np.asarray(model.mass(q).diagonal(), float), 0.0, None))
        w = w if w.any() else np.ones(model.n)
        if model.mass_matrix is not None:
            self.weights = w
        return w

    def summary(self) -> dict:
        """Scalars for the run summary: the model's generic rank, whether it has redundant rows, the steps taken with
        the rank-revealing solve, how many of them pinned a direction of a singular configuration, and the largest
        change of the accelerations of an accepted step as a fraction of its branch limit (vouch; anywhere in the
        run, the stop applies next to a singular configuration only)."""
        return {"generic_rank": self.generic, "redundant_rows": int(self.stepper.ws.m - self.generic),
                "rank_revealing_steps": self.rank_steps, "pinned_steps": self.pinned_steps,
                "max_branch_jump": self.max_jump, "release_restarts": self.releases,
                "max_release_reach": self.max_release}
