"""Step-size collapse detection for a run (issue 7 item 2): the smallest accepted step and a warning when it
falls below ``STEP_COLLAPSE_RATIO`` times the run's duration.

Why: an adaptive Runge-Kutta step that shrinks to ~1e-13 s has met a feature it cannot resolve. At a
singular configuration of the constraints this is the round-off floor of redundant coordinates (README,
"Known limit"; linalg.rank.NORMAL_ERROR_WEIGHT): the run either fails (step below the float
spacing of t) or creeps through and may continue on another assembly branch without any error. Measured
on the double four-bar (10 s, six initial crank rates, dop853 and dopri5): healthy runs never took a
step below 1e-3 s; runs that switched branches took steps of 7e-15 s (rtol 1e-11) and 4e-11 s (rtol 1e-10,
before the projection's polish step). The ratio 1e-9 lies far from both.
"""
from __future__ import annotations

import warnings

import numpy as np

#: smallest accepted step, as a fraction of t_end - t_start, below which the run is flagged
STEP_COLLAPSE_RATIO = 1e-9


class StepCollapseWarning(RuntimeWarning):
    """The step size of a run collapsed; the result may be on another assembly branch."""


class StepWatch:
    """``accepted(step)`` after every accepted step; ``summary()`` -> {"min_step", "min_step_t"[, "warning"]}.
    The formulation's ``failure_hint(t, y)`` (if any) explains a collapse near a singular configuration."""

    def __init__(self, form, t_start: float, t_end: float):
        self.form, self.limit = form, STEP_COLLAPSE_RATIO * (t_end - t_start)
        self.h_min, self.t_min, self.hint = np.inf, t_start, ""

    def accepted(self, step) -> None:
        h = abs(step.h)
        if h < self.h_min:
            self.h_min, self.t_min = h, step.t
            if h < self.limit:
                hint = getattr(self.form, "failure_hint", None)
                self.hint = hint(step.t, step.y) if hint else ""

    def summary(self) -> dict:
        out = {"min_step": float(self.h_min), "min_step_t": float(self.t_min)}
        if self.h_min < self.limit:
            out["warning"] = (f"the step size collapsed to {self.h_min:.1e} s at t = {self.t_min:.6g}; the run "
                              f"may have left its assembly branch there.{self.hint}")
            warnings.warn(out["warning"], StepCollapseWarning, stacklevel=3)
        return out
