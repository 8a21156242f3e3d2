"""A run that cannot vouch for its answer stops (issue 7 item 2, issue 12): :class:`StepWatch` sees every
accepted step and raises :class:`~multibody.errors.SimulationError`, naming the time and the cause, when

- the step size collapses below ``STEP_COLLAPSE_RATIO`` times the run's duration (a step that ends a
  segment exactly at its stop time is exempt: it is clipped, not chosen). Why: an adaptive Runge-Kutta
  step that shrinks to ~1e-13 s has met a feature it cannot resolve; at a singular configuration of the
  constraints that was the round-off floor of the redundant coordinates (linalg.rank.pinned_solve), and
  such runs continued on another assembly branch (measured on the double four-bar before issue 12: steps
  of 7e-15 s at rtol 1e-11 and 1.4e-13 s at rtol 1e-10 under OpenBLAS's Prescott kernel, crank spread
  70 rad). Healthy lagrange runs of benchmarks/singular_matrix.py took steps >= 2.4e-8 s per 10 s (rtol
  1e-12, atol 1e-14: a margin of only 2.4 above the limit; at rtol >= 1e-11 >= 1.5e-7 s) while they crept up
  to each crossing; with the crossing step (.crossings.CrossingMonitor.steer) and the extended-precision
  projection (formulations.extended_projection) they take >= 3.6e-4 s (double four-bar) and 7.9e-4 s
  (N-four-bar with 10 cells, 20 s) there.
- the formulation's action after a step (projection, re-basis, coordinate switch) takes the physical state
  (q, v) = form.split(t, y) onto another assembly branch: it turns the velocity by more than ``BRANCH_TURN``
  of the speed or moves the positions by more than ``BRANCH_TURN`` of the model's length scale
  (:func:`branch_move`). Why: at a singular configuration the branches meet at one q with different tangents
  (paper 000 Sect. 3: its continuation keeps the tangent that continues the incoming one), so the velocity on
  another branch differs from the incoming one by a fraction of the speed set by the geometry, whatever the
  tolerance (the double four-bar: 0.5, one cell folding while the other turns, tests/test_singular_tolerance.py);
  away from singular configurations another assembly lies a finite distance away in q. A projection that keeps
  the branch removes a local error ~ rtol of the state (measured <= 3.8e-3 of the speed at rtol 1e-4).
- the action changes the velocity by more than ``ACTION_TOLERANCES`` times the relative tolerance rtol + atol
  / speed: then it corrected more than the error control admits, and the answer's error is no longer the
  tolerance's (nullspace --basis flow at rtol 1e-12: a re-basis turned the velocity by 4.7e-4 of the speed
  near the singular configuration, 3.9e8 tolerances, and the crank tip ended 1.4e-3 m off).

The earlier test, a move above a fixed 1e8 error scales atol + rtol |y| (componentwise), was unsound at both
ends: at rtol >= 1e-8 a branch switch is only ~1 / rtol scales and passed unseen, and componentwise scales of
coordinates passing through zero made harmless moves of runs at rtol 1e-12 exceed it. The move in error scales
is still reported (``max_projection_jump``).

``summary()`` reports the smallest step, the largest after-step move (in error scales, as a turn or shift, and
in tolerances) and their times, and the singular configurations crossed (:mod:`.crossings`).
"""
from __future__ import annotations

import numpy as np

from ..errors import SimulationError
from ..assembly import SPARSE_MIN_COORDINATES, use_sparse
from .crossings import CrossingMonitor
from .crossings_sparse import SparseCrossingMonitor

#: smallest accepted step, as a fraction of t_end - t_start, below which the run stops (once a step above it was
#: accepted: the starting step chosen for a tiny atol may be smaller, and then grows)
STEP_COLLAPSE_RATIO = 1e-9

#: largest turn of the velocity by the after-step action, as a fraction of the speed (both weighted by
#: sqrt(diag M), :func:`branch_move`), and largest position move as a fraction of the model's length scale
BRANCH_TURN = 0.1

#: largest velocity change by the after-step action, in units of the relative tolerance rtol + atol / speed
#: (:func:`branch_move`): the error control admits normal errors of 1e4 tolerances
#: (linalg.rank.NORMAL_ERROR_WEIGHT); a change ten times larger is no correction of a controlled error, and the
#: answer's error is then no longer set by the tolerance (measured: <= 5.7e3 in runs of benchmarks/singular_matrix.py
#: that keep their branch; 3.9e8 in nullspace --basis flow, dopri5, rtol 1e-12, whose crank tip ended 1.4e-3 m off)
ACTION_TOLERANCES = 1e5

#: speeds below FLOOR_SCALES * atol (weighted) are not resolved by the error control (atol is the absolute error a
#: step may make; its direction is not a branch): a run at rest or turning back is not stopped by its round-off
FLOOR_SCALES = 1e2


class StepWatch:
    """``accepted(step, y_new, at_stop)`` after every accepted step (y_new: the projected state or None);
    ``summary()`` -> {"min_step", "min_step_t", "max_projection_jump", "max_projection_jump_t" (error scales),
    "max_branch_move", "max_branch_move_t" (the larger of turn and shift of :func:`branch_move`),
    "max_action_tolerances", "max_action_tolerances_t" (its third number)}. The
    formulation's ``failure_hint(t, y)`` (if any) explains a failure near a singular configuration."""

    def __init__(self, form, t_start: float, t_end: float, rtol: float = 1e-6, atol: float = 1e-8):
        self.form, self.limit, self.rtol, self.atol = form, STEP_COLLAPSE_RATIO * (t_end - t_start), rtol, atol
        self.h_min, self.t_min, self.h_max = np.inf, t_start, 0.0
        self.jump, self.t_jump = 0.0, t_start
        self.turn, self.t_turn = 0.0, t_start
        self.tols, self.t_tols = 0.0, t_start
        self.crossings = crossing_monitor(form)
        self.crossings.run_tolerances = (rtol, atol)
        self.stepper = None
        self._tell(form)

    def _tell(self, form) -> None:
        """Give the run's tolerances to a formulation with a singular window (formulations.crossing_window); the
        compiled measure of the after-step action (fast.rk_kernels.action_move) where the formulation runs compiled
        (its kernels are loaded) and M is constant: its weights sqrt(diag M) once."""
        if hasattr(form, "set_tolerance"):
            form.set_tolerance(self.rtol, self.atol)
        self.kernel = None
        M = form.model.mass_matrix
        if getattr(form, "fast_rhs", None) is not None and M is not None:
            from ..fast.rk_kernels import action_move
            w = np.sqrt(np.clip(np.diag(M), 0.0, None))
            self.kernel, self.w = action_move, w if w.any() else np.ones(form.model.n)

    def restart(self, form) -> None:
        """Watch a new formulation (after an event changed the model)."""
        self.form = form
        self._tell(form)
        self.crossings.restart(form)

    def _measure(self, before, after) -> tuple:
        """(jump in error scales, turn, shift, tolerances) of the after-step action (see the class docstring)."""
        if self.kernel is not None:
            return self.kernel(before, after, self.w, self.rtol, self.atol, FLOOR_SCALES, self.form.model.length_scale)
        scale = self.atol + self.rtol * np.maximum(np.abs(before), np.abs(after))
        return (float(np.max(np.abs(after - before) / scale)),
                *branch_move(self.form.model, before, after, self.rtol, self.atol))

    def accepted(self, step, y_new=None, at_stop: bool = False, before=None) -> None:
        """``before``: the physical state (q, v) before the formulation's after-step action (driver.advance;
        default: read from step.y now)."""
        if y_new is not None:
            if before is None:
                before = np.concatenate(self.form.split(step.t, step.y))
            after = np.concatenate(self.form.split(step.t, y_new))
            jump, turn, shift, tols = self._measure(before, after)
            if jump > self.jump:
                self.jump, self.t_jump = jump, step.t
            if max(turn, shift) > self.turn:
                self.turn, self.t_turn = max(turn, shift), step.t
            if tols > self.tols:
                self.tols, self.t_tols = tols, step.t
            if turn > BRANCH_TURN or shift > BRANCH_TURN:
                what = (f"turned the velocity by {turn:.2g} of the speed" if turn > BRANCH_TURN else
                        f"moved the positions by {shift:.2g} of the length scale")
                self._fail(step, y_new, f"the projection onto the constraints after the step {what} (limit "
                                        f"{BRANCH_TURN:g}): the run left its assembly branch there")
            if tols > ACTION_TOLERANCES:
                self._fail(step, y_new, f"the projection onto the constraints after the step changed the velocity "
                                        f"by {turn:.1e} of the speed, {tols:.1e} times the tolerance rtol + atol / "
                                        f"speed (limit {ACTION_TOLERANCES:.0e}): the run cannot vouch for its "
                                        "accuracy there")
        h = abs(step.h)
        if h < self.h_min and not at_stop:
            self.h_min, self.t_min = h, step.t
        if h < self.limit <= self.h_max and not at_stop:   # fallen from above the limit (a tiny first step is not)
            self._fail(step, step.y, f"the step size collapsed to {h:.1e} s (below {STEP_COLLAPSE_RATIO:.0e} "
                                     "of the run): the run cannot vouch for its assembly branch there")
        self.h_max = max(self.h_max, h)
        self.crossings.accepted(step, step.y if y_new is None else y_new)
        if self.stepper is not None:        # issue 12: the crossing step (crossings.CrossingMonitor.steer)
            self.crossings.steer(self.stepper)
            limit = getattr(self.form, "step_limit", None)      # formulations.crossing_window: resolved steps
            if limit is not None and abs(self.stepper.h) > limit:
                self.stepper.h = self.stepper.direction * limit

    def attach(self, stepper) -> None:
        """The stepper of the segment being watched: its next step is chosen across a singular configuration."""
        self.stepper = stepper

    def _fail(self, step, y, what: str):
        hint = getattr(self.form, "failure_hint", None)
        raise SimulationError(f"model '{self.form.model.name}' at t = {step.t:.9g}: {what}."
                              f"{hint(step.t, y) if hint else ''} Nothing was saved from this run; try another "
                              "tolerance or formulation (docs/guide/singular.md).")

    def summary(self) -> dict:
        return {"min_step": float(self.h_min), "min_step_t": float(self.t_min),
                "max_projection_jump": float(self.jump), "max_projection_jump_t": float(self.t_jump),
                "max_branch_move": float(self.turn), "max_branch_move_t": float(self.t_turn),
                "max_action_tolerances": float(self.tols), "max_action_tolerances_t": float(self.t_tols),
                **self.crossings.summary()}


def branch_move(model, before, after, rtol: float, atol: float) -> tuple[float, float, float]:
    """(turn, shift, tolerances) of the after-step action that took the physical state ``before`` = [q, v] to
    ``after`` (issue 12). turn = max_i w_i |dv_i| / speed, speed = max_j w_j |v_j| over before and after (at least
    FLOOR_SCALES atol max_j w_j), w = sqrt(diag M(q)): every weighted component is the square root of a kinetic
    energy, so translations and rotations compare; coordinates without mass are not seen. shift = max_i |dq_i| /
    length scale. tolerances = turn / (rtol + atol max_j w_j / speed): the velocity change in units of the
    run's relative tolerance. A projection onto another assembly branch at a singular configuration turns the
    velocity by the separation of the branch tangents there, O(1) (paper 000 Sect. 3); a projection that keeps
    the branch removes the local error, whose normal part the error control keeps below 1e4 tolerances
    (linalg.rank.NORMAL_ERROR_WEIGHT)."""
    n = model.n
    w = np.sqrt(np.clip(np.diag(model.mass(after[:n])), 0.0, None))
    if not w.any():
        w = np.ones(n)
    w_max = float(w.max())
    speed = max(float(np.max(w * np.maximum(np.abs(before[n:]), np.abs(after[n:])))), FLOOR_SCALES * atol * w_max)
    if speed <= 0.0:
        return 0.0, float(np.max(np.abs(after[:n] - before[:n]))) / model.length_scale, 0.0
    turn = float(np.max(w * np.abs(after[n:] - before[n:]))) / speed
    shift = float(np.max(np.abs(after[:n] - before[:n]))) / model.length_scale
    return turn, shift, turn / (rtol + atol * w_max / speed)


def crossing_monitor(form) -> CrossingMonitor:
    """The dense monitor (:mod:`.crossings`) for small models, the sparse one (:mod:`.crossings_sparse`) for models
    of the sparse path (n >= SPARSE_MIN_COORDINATES, eligible); other large models stay unmonitored (and say so)."""
    model = form.model
    if model.n >= SPARSE_MIN_COORDINATES and use_sparse(model, None):
        return SparseCrossingMonitor(form)
    return CrossingMonitor(form)
