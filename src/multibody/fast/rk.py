"""The compiled attempts of an adaptive explicit Runge-Kutta step (issue 16 item 1), for a Lagrange formulation
whose right-hand side and error filter are compiled: a :class:`.lagrange.FastLagrangeRhs` with a
:class:`.step.FastStep`, or on the sparse path a :class:`.band.SparseBandRhs` with a :class:`.band.BandStep`.
:class:`CompiledAttempts` packs the arguments of :func:`.rk_kernels.rk_attempts` once (arrays of size 0 stand
for the path a model does not take); integrate/explicit_compiled.py decides when it applies and repeats on the
reference path whatever the kernel hands back.
"""
from __future__ import annotations

import numpy as np

from .band import BandSchur, SparseBandRhs
from .lagrange import FastLagrangeRhs
from .step_kernels import MIN_NORM_PIVOT_RATIO

_Z, _ZI, _Z2, _ZI2 = np.zeros(0), np.zeros(0, np.int64), np.zeros((0, 0)), np.zeros((0, 5), np.int64)


def _band_args(band: BandSchur | None, n: int):
    """The band kernel's arguments (fast.band.BandSchur), or arrays of their types for a model without one."""
    if band is not None:
        p = band.pattern
        return band.pk, band.minv, band.f, band.tau, p.iperm, p.pairs, band.work
    pk = (_ZI2, _Z, np.zeros((0, 3), np.int64), np.zeros((0, 2)), _ZI)
    work = (np.zeros(n + 1), np.zeros(n + 1), _Z, _ZI, _ZI, _Z, _Z, np.zeros((0, 1)))
    return pk, _Z, _Z, 0.0, _ZI, (_ZI, _ZI, _ZI, _ZI, _Z), work


def _dense_args(rhs: FastLagrangeRhs | None, n: int):
    """kernels.lagrange_rhs's arguments after ddf, or arrays of their types (M of size 0: no dense path)."""
    if rhs is not None:
        return (rhs.prim, rhs.pval, rhs.mcols, rhs.mloc, rhs.mvec, rhs.M, rhs.Minv, rhs.diag, rhs.f, rhs.rel,
                rhs.power, rhs.tau, rhs.qe, rhs.ve, rhs.A, rhs.gamma, rhs.B, rhs.S, rhs.lam)
    return (_ZI2, _Z, np.zeros((0, 3), np.int64), np.zeros((0, 2)), _ZI, _Z2, _Z2, True, _Z, 0.0, 0, 0.0,
            np.zeros(n + 1), np.zeros(n + 1), _Z2, _Z, _Z2, _Z2, _Z)


def _filter_args(step, n: int):
    """(step_kernels.tangent_error's, band_kernels.band_tangent_error's) arguments after ``err``: the step's
    (a FastStep, or its BandStep if it has one, or a BandStep) and arrays of the other's types."""
    from ..linalg.rank import NORMAL_ERROR_WEIGHT
    w = float(NORMAL_ERROR_WEIGHT)
    dense = (w, False, _ZI2, _Z, np.zeros((0, 3), np.int64), np.zeros((0, 2)), _ZI, 0.0, np.zeros(n + 1),
             np.zeros(n + 1), _Z2, _Z, _Z2, _Z, _Z)
    if getattr(step, "model_data", None) is not None:       # FastStep
        prim, pval, _, mcols, mloc, mvec = step.model_data
        dense = (w, step.forced, prim, pval, mcols, mloc, mvec, MIN_NORM_PIVOT_RATIO, step.qe, step.ve, step.A,
                 step.gamma, step.G, step.ax, step.dx)
        step = step.band_step
        if step is None:
            return dense, (w, False) + _band_args(None, n)[:1] + (0.0, _ZI, (_ZI, _ZI, _ZI, _ZI, _Z),
                                                                 (_Z, _ZI, _ZI, _Z2))
    p = step.pattern
    return dense, (w, step.forced, step.pk, step.tau, p.iperm, p.pairs, step.work)


class CompiledAttempts:
    """``(t, y, h_abs, bounds, K, error_prev) -> kernel result`` (:func:`.rk_kernels.rk_attempts`) for
    ``formulation`` (checked by :func:`applies`), a tableau with an error estimate, scalar tolerances and a
    StepController (its constants ``shift``, ``floor``: controllers.PI_ALPHA_SHIFT, ERROR_NORM_FLOOR)."""

    def __init__(self, formulation, tableau, rtol: float, atol: float, controller, shift: float, floor: float,
                 stretch: float):
        from . import rk_kernels
        rhs, n = formulation.fast_rhs, formulation.model.n
        self.kernel, self.counts, self.rhs = rk_kernels.rk_attempts, np.zeros(2, np.int64), rhs
        self.OK, self.FILTER_DECLINED, self.HAND_BACK = rk_kernels.OK, rk_kernels.FILTER_DECLINED, rk_kernels.HAND_BACK
        sparse = isinstance(rhs, SparseBandRhs)
        path = formulation.sparse_path if sparse else None
        self.window = (lambda: path.window) if path is not None else (lambda: False)
        self.dense = _dense_args(None if sparse else rhs, n)
        self.use_band = rhs.band is not None
        self.band = _band_args(rhs.band, n)
        step = formulation.band_step if sparse else formulation.fast_step
        self.filt, self.band_filt = _filter_args(step, n)
        self.use_filter = 0 if formulation.error_filter is None else 2 if self.band_filt[4].size else 1
        self.tab, self.ctrl, self.tols = step_control(tableau, rtol, atol, controller, shift, floor, stretch)
        self.ddf = np.zeros(formulation.ws.m)

    def __call__(self, t, y, h_abs, bounds, K, error_prev):
        if self.window():       # issue 12: the sparse path's dense window; the reference makes the attempt
            return self.HAND_BACK, t, y, h_abs, h_abs, 0.0, 0, 0, False
        before = self.counts.copy()
        out = self.kernel(t, y, h_abs, bounds, self.tab, self.ctrl + (-1.0 if error_prev is None else error_prev,),
                          self.tols, K, self.ddf, self.dense, self.band, self.use_band, self.filt, self.band_filt,
                          self.use_filter, self.counts)
        self.rhs.paths[0] += int(self.counts[0] - before[0])
        self.rhs.paths[1] += int(self.counts[1] - before[1])
        return out


def step_control(tableau, rtol: float, atol: float, controller, shift: float, floor: float, stretch: float) -> tuple:
    """(tab, ctrl, tols) of the compiled attempts (rk_kernels.rk_attempts, spatial_rk_kernels.spatial_attempts): the
    tableau's arrays and constants, the controller's parameters (without the previous error norm), the tolerances."""
    tab = (np.ascontiguousarray(tableau.c), np.ascontiguousarray(tableau.a), np.ascontiguousarray(tableau.b),
           np.ascontiguousarray(tableau.e), int(tableau.n_stages), bool(tableau.fsal), int(tableau.error_order),
           float(stretch))
    ctrl = (float(controller.safety), float(controller.min_factor), float(controller.max_factor),
            float(controller.beta), float(shift), float(floor))
    return tab, ctrl, (float(rtol), float(atol))


def applies(formulation) -> bool:
    """True when the formulation's right-hand side and error filter are the compiled ones the kernel reproduces:
    a planar FastLagrangeRhs with a FastStep, or a SparseBandRhs with a BandStep, without prescribed motions
    (their f'' is evaluated in Python)."""
    rhs = getattr(formulation, "fast_rhs", None)
    if type(rhs) is FastLagrangeRhs:
        return not rhs.motions and getattr(formulation, "fast_step", None) is not None
    return type(rhs) is SparseBandRhs and not rhs.pack.motions and getattr(formulation, "band_step", None) is not None
