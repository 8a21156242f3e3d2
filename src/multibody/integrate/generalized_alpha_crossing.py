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
  sigma_1 < SCREEN) 167-168 at h = 1e-3 (98 on the 2x2) and 1625 at h = 1e-4, 62-73 and 356 with a grid point on
  t* (the switch to the pinned solve and back: docs/guide/singular.md); off it a switch is caught when
  d / h > h omega / (K sin phi), i.e. unless the other branch's point is within a fraction ~h omega of the step from
  t*, where it lies within ~h^2 omega S / K of this branch's, the order of the step's own correction h^3 Q. No tuned
  constant: the limit follows from h (through Q_n) and the motion (S, a, j).

A step above the limit stops the run with the time and the cause where sigma_r / sigma_1 of A is below SCREEN (next
to a singular configuration, where another branch is within reach; elsewhere the same jump is a motion the step does
not resolve, which the fixed-step halving and the error control deal with). The crossings themselves are reported by
the run's crossing monitor (simulation.crossings: ``singular_crossings``), as for every integrator.
"""
from __future__ import annotations

import numpy as np

from .explicit import IntegrationError
from .generalized_alpha_rank import generic_rank, rank_attempt

#: sigma_r / sigma_1 below which a step counts as near a singular configuration: the other branch's solution of a
#: step lies ~|t - t*| away, within the reach of the prediction's error only next to t* (sigma_r / sigma_1 ~ 0.3
#: |t - t*| / s on the N-four-bar; the modified double four-bar reaches 0.18 between crossings, where its crank slows)
SCREEN = 1e-2


class CrossingGuard:
    """The choice of solve and the branch check of one GeneralizedAlpha run (module doc); None when the model has no
    constraint rows or A has full row rank at every configuration (nothing to do)."""

    def __init__(self, stepper):
        self.stepper, ws, model = stepper, stepper.ws, stepper.model
        A = ws.constraints(stepper.t, stepper.y[: model.n], stepper.y[model.n:])[1]
        self.generic = generic_rank(A)
        self.redundant = self.generic < ws.m
        self.weights = None
        self.rank_steps = self.pinned_steps = 0
        self.force = self.pending = None    # the reaction A^T lambda + carried of the last accepted / tried step
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
                self.pending = None
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
        self.pinning = out[4] < self.generic        # stay with the pinned solve until it keeps every direction
        self.window_h = floor_h if self.pinning else np.inf
        self.pending = out[5]
        return out[:4]

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
        the accelerations exceeds branch_limit (module doc) next to a singular configuration."""
        st = self.stepper
        n = st.n
        w = self._weights(out[0][:n])
        change, limit = float(np.max(w * np.abs(out[1] - st.a))), self.branch_limit(w)
        self.force = self.pending
        self.max_jump = max(self.max_jump, change / max(limit, np.finfo(float).tiny))
        if change > limit:
            A = st.ws.constraints(st.t + h, out[0][:n], out[0][n:])[1]
            s = np.linalg.svd(np.asarray(A.toarray() if hasattr(A, "toarray") else A, float), compute_uv=False)
            rho = float(s[self.generic - 1] / s[0]) if self.generic and s[0] > 0 else 1.0
            if rho < SCREEN:
                raise IntegrationError(
                    f"generalized-alpha: at t = {st.t + h:.9g}, next to a singular configuration (sigma_r / sigma_1 = "
                    f"{rho:.2g}), the step changed the accelerations by {change / max(limit, 1e-300):.3g} times the "
                    f"limit sqrt(|q'''| |v|) of the motion: the run cannot vouch for its assembly branch there.")
        self.rate = change / h

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
                "max_branch_jump": self.max_jump}
