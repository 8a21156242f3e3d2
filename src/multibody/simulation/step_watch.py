"""A run that cannot vouch for its answer stops (issue 7 item 2, issue 12): :class:`StepWatch` sees every
accepted step and raises :class:`~multibody.errors.SimulationError`, naming the time and the cause, when

- the step size collapses below ``STEP_COLLAPSE_RATIO`` times the run's duration (a step that ends a
  segment exactly at its stop time is exempt: it is clipped, not chosen). Why: an adaptive Runge-Kutta
  step that shrinks to ~1e-13 s has met a feature it cannot resolve; at a singular configuration of the
  constraints that was the round-off floor of the redundant coordinates (linalg.rank.pinned_solve), and
  such runs continued on another assembly branch (measured on the double four-bar before issue 12: steps
  of 7e-15 s at rtol 1e-11 and 1.4e-13 s at rtol 1e-10 under OpenBLAS's Prescott kernel, crank spread
  70 rad). Healthy lagrange runs of benchmarks/singular_matrix.py took steps >= 2.4e-8 s per 10 s (rtol
  1e-12, atol 1e-14: a margin of only 2.4 above the limit; at rtol >= 1e-11 >= 1.5e-7 s).
- the formulation's action after a step (projection, re-basis, coordinate switch) moves the physical state
  (q, v) = form.split(t, y) by more than ``PROJECTION_JUMP`` times the step's error scale atol + rtol |(q, v)|
  (componentwise). Why: the projection removes the local error normal to the
  constraints, which the error control keeps below 1e4 error scales (linalg.rank.NORMAL_ERROR_WEIGHT);
  round-off near a singular configuration adds more at atol far below rtol (measured <= 2e6 scales over
  the matrix). A projection onto the other assembly branch turns the velocity by O(|v|): 1.6e10 scales
  in the run above. 1e8 lies two orders of magnitude from both. The nullspace formulation's re-orthogonalised
  basis T(x) turned the velocity T w by 5e-3 per step near a singular configuration at rtol 1e-12 (2.5e9
  scales; the run used to end 1.3e-2 m off with exit 0): its state is compared as (q, v), not as (x, w, T).

``summary()`` reports the smallest step, the largest projection jump (in error scales) and their times,
and the singular configurations crossed (:mod:`.crossings`).
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

#: largest projection move, in error scales atol + rtol |y|, that a run accepts
PROJECTION_JUMP = 1e8


class StepWatch:
    """``accepted(step, y_new, at_stop)`` after every accepted step (y_new: the projected state or None);
    ``summary()`` -> {"min_step", "min_step_t", "max_projection_jump", "max_projection_jump_t"}. The
    formulation's ``failure_hint(t, y)`` (if any) explains a failure near a singular configuration."""

    def __init__(self, form, t_start: float, t_end: float, rtol: float = 1e-6, atol: float = 1e-8):
        self.form, self.limit, self.rtol, self.atol = form, STEP_COLLAPSE_RATIO * (t_end - t_start), rtol, atol
        self.h_min, self.t_min, self.h_max = np.inf, t_start, 0.0
        self.jump, self.t_jump = 0.0, t_start
        self.crossings = crossing_monitor(form)

    def restart(self, form) -> None:
        """Watch a new formulation (after an event changed the model)."""
        self.form = form
        self.crossings.restart(form)

    def accepted(self, step, y_new=None, at_stop: bool = False, before=None) -> None:
        """``before``: the physical state (q, v) before the formulation's after-step action (driver.advance;
        default: read from step.y now)."""
        if y_new is not None:
            if before is None:
                before = np.concatenate(self.form.split(step.t, step.y))
            after = np.concatenate(self.form.split(step.t, y_new))
            scale = self.atol + self.rtol * np.maximum(np.abs(before), np.abs(after))
            jump = float(np.max(np.abs(after - before) / scale))
            if jump > self.jump:
                self.jump, self.t_jump = jump, step.t
            if jump > PROJECTION_JUMP:
                self._fail(step, y_new, f"the projection onto the constraints after the step moved the state by "
                                        f"{jump:.1e} error scales (atol + rtol |y|; limit {PROJECTION_JUMP:.0e}): the "
                                        "run left its assembly branch there")
        h = abs(step.h)
        if h < self.h_min and not at_stop:
            self.h_min, self.t_min = h, step.t
        if h < self.limit <= self.h_max and not at_stop:   # fallen from above the limit (a tiny first step is not)
            self._fail(step, step.y, f"the step size collapsed to {h:.1e} s (below {STEP_COLLAPSE_RATIO:.0e} "
                                     "of the run): the run cannot vouch for its assembly branch there")
        self.h_max = max(self.h_max, h)
        self.crossings.accepted(step, step.y if y_new is None else y_new)

    def _fail(self, step, y, what: str):
        hint = getattr(self.form, "failure_hint", None)
        raise SimulationError(f"model '{self.form.model.name}' at t = {step.t:.9g}: {what}."
                              f"{hint(step.t, y) if hint else ''} Nothing was saved from this run; try another "
                              "tolerance or formulation (docs/guide/singular.md).")

    def summary(self) -> dict:
        return {"min_step": float(self.h_min), "min_step_t": float(self.t_min),
                "max_projection_jump": float(self.jump), "max_projection_jump_t": float(self.t_jump),
                **self.crossings.summary()}


def crossing_monitor(form) -> CrossingMonitor:
    """The dense monitor (:mod:`.crossings`) for small models, the sparse one (:mod:`.crossings_sparse`) for models
    of the sparse path (n >= SPARSE_MIN_COORDINATES, eligible); other large models stay unmonitored (and say so)."""
    model = form.model
    if model.n >= SPARSE_MIN_COORDINATES and use_sparse(model, None):
        return SparseCrossingMonitor(form)
    return CrossingMonitor(form)
