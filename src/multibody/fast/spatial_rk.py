"""The compiled attempts of an adaptive explicit Runge-Kutta step (issue 16) for the Lagrange formulation on
spatial director models: a :class:`.spatial_lagrange.SpatialLagrangeRhs` with a :class:`.spatial_step.SpatialStep`.
:class:`SpatialAttempts` packs the arguments of :func:`.spatial_rk_kernels.spatial_attempts` (the right-hand
side's and the error filter's own workspaces, so the counters and the rows are the reference's) and has the call
of :class:`.rk.CompiledAttempts`; integrate/explicit_compiled.py decides when it applies and repeats on the
reference path whatever the kernel hands back.
"""
from __future__ import annotations

import numpy as np

from ..linalg.rank import NORMAL_ERROR_WEIGHT
from .rk import step_control
from .spatial_lagrange import SpatialLagrangeRhs
from .spatial_step import SpatialStep


class SpatialAttempts:
    """``(t, y, h_abs, bounds, K, error_prev) -> kernel result`` (:func:`.spatial_rk_kernels.spatial_attempts`)
    for ``formulation`` (checked by :func:`spatial_applies`), a tableau with an error estimate, scalar tolerances
    and a StepController (its constants ``shift``, ``floor``: controllers.PI_ALPHA_SHIFT, ERROR_NORM_FLOOR)."""

    def __init__(self, formulation, tableau, rtol: float, atol: float, controller, shift: float, floor: float,
                 stretch: float):
        from . import spatial_rk_kernels as k
        rhs, step = formulation.fast_rhs, formulation.fast_step
        self.kernel, self.counts, self.rhs, self.step = k.spatial_attempts, np.zeros(1, np.int64), rhs, step
        self.OK, self.FILTER_DECLINED = k.OK, k.FILTER_DECLINED
        self.qtab, self.mass = rhs.table.tab, rhs.mass
        self.weight = float(NORMAL_ERROR_WEIGHT)
        self.use_filter = formulation.error_filter is not None
        self.tab, self.ctrl, self.tols = step_control(tableau, rtol, atol, controller, shift, floor, stretch)

    def __call__(self, t, y, h_abs, bounds, K, error_prev):
        (pattern, work), (filter_pattern, (xv, L, r)) = self.rhs.rows(), self.step.rows()
        filt = (self.weight, self.step.tau, xv, L, r, self.step.dx)
        before = int(self.counts[0])
        out = self.kernel(t, y, h_abs, bounds, self.tab, self.ctrl + (-1.0 if error_prev is None else error_prev,),
                          self.tols, K, pattern.pat, self.qtab, self.mass, work, filt, filter_pattern.pat,
                          self.use_filter, self.counts)
        self.rhs.paths[0] += int(self.counts[0]) - before
        return out


def spatial_applies(formulation) -> bool:
    """True when the formulation's right-hand side and error filter are the compiled spatial ones the kernel
    reproduces: a SpatialLagrangeRhs with a SpatialStep (their models have no prescribed motions:
    fast.spatial.spatial_supported)."""
    return type(getattr(formulation, "fast_rhs", None)) is SpatialLagrangeRhs and \
        type(getattr(formulation, "fast_step", None)) is SpatialStep
