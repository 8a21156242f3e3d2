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
continues the incoming motion). A Newton solve that converged on the other branch moves q by ~kappa d (d = |t - t*|,
kappa the branches' separation rate ~ the speed times the sine of their angle), so the velocity by ~gamma' kappa d
and the acceleration by ~beta' kappa d: h |a_n+1 - a_n| ~ kappa d / (beta h), of the order of the speed for d ~ h.
On the branch h |a_n+1 - a_n| ~ h^2 |a'| is far below it. So every accepted step of a model that can cross is
checked: when h max_i w_i |a_n+1 - a_n|_i exceeds BRANCH_TURN of the speed max_i w_i |v_i| (w = sqrt(diag M), as
simulation.step_watch.branch_move weighs the velocity) and sigma_r / sigma_1 of A is below SCREEN there (the run is
next to a singular configuration; elsewhere such a jump is fast dynamics, e.g. a start from rest), the run stops with
the time and the cause instead of reporting success. The crossings themselves are reported by the run's crossing
monitor (simulation.crossings: ``singular_crossings``), as for every integrator.
"""
from __future__ import annotations

import numpy as np

from .explicit import IntegrationError
from .generalized_alpha_rank import generic_rank, rank_attempt

#: largest h |a_n+1 - a_n| (weighted) of an accepted step near a singular configuration, as a fraction of the speed
#: (the step watch's BRANCH_TURN, simulation.step_watch)
BRANCH_TURN = 0.1
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
        out = rank_attempt(st, h, np.asarray(force, float), self.generic)
        if out is None:
            return None
        self.rank_steps += 1
        self.pinned_steps += out[4] < self.generic
        self.pinning = out[4] < self.generic        # stay with the pinned solve until it keeps every direction
        self.pending = out[5]
        return out[:4]

    def vouch(self, h: float, out) -> None:
        """Raise IntegrationError if the step (h, out = (y, a, abar, lambda)) may have left the branch (module doc)."""
        st = self.stepper
        n = st.n
        w = self._weights(out[0][:n])
        speed = max(float(np.max(w * np.abs(st.y[n:]))), float(np.max(w * np.abs(out[0][n:]))))
        jump = h * float(np.max(w * np.abs(out[1] - st.a)))
        self.force = self.pending
        if jump <= BRANCH_TURN * speed:
            return
        A = st.ws.constraints(st.t + h, out[0][:n], out[0][n:])[1]
        s = np.linalg.svd(np.asarray(A.toarray() if hasattr(A, "toarray") else A, float), compute_uv=False)
        rho = float(s[self.generic - 1] / s[0]) if self.generic and s[0] > 0 else 1.0
        if rho < SCREEN:
            raise IntegrationError(
                f"generalized-alpha: at t = {st.t + h:.9g}, next to a singular configuration (sigma_r / sigma_1 = "
                f"{rho:.2g}), the step changed the accelerations by {jump / max(speed, 1e-300):.2g} of the speed per "
                f"step (limit {BRANCH_TURN:g}): the run cannot vouch for its assembly branch there.")

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
        the rank-revealing solve and how many of them pinned a direction of a singular configuration."""
        return {"generic_rank": self.generic, "redundant_rows": int(self.stepper.ws.m - self.generic),
                "rank_revealing_steps": self.rank_steps, "pinned_steps": self.pinned_steps}
