"""Compiled per-step work of a Lagrange formulation with a compiled right-hand side (issue 7 item 1):
:class:`FastStep` runs the projection after an accepted step, the tangent-space error filter and the
recorder's per-step output in compiled calls (kernels in :mod:`.step_kernels`, which name the
reference implementations they reproduce); where A A^T is ill-conditioned (near a singular
configuration, redundant rows) it declines and the caller runs the NumPy reference, so those steps give
exactly the reference's numbers. It shares the packed model of the
:class:`~multibody.fast.lagrange.FastLagrangeRhs` and has its own workspaces, so it never disturbs the
right-hand side's evaluation counters.
"""
from __future__ import annotations

import numpy as np

from ..kinematics import KinematicTolerance
from ..linalg.rank import NORMAL_ERROR_WEIGHT
from .step_kernels import MIN_NORM_PIVOT_RATIO, multipliers, project, tangent_error, violations


class FastStep:
    """Per-step work of ``formulation`` (a Lagrange formulation whose ``fast_rhs`` is set).

    ``project(t, y) -> y or None``, ``tangent_error(t, y, err) -> err or None``, ``record(t, q, v) ->
    (vdot, lam, (max |Phi|, max |A v + Phi_t|), A) or None``; None means: use the reference path
    (near a singular configuration or with redundant rows, where A A^T is ill-conditioned, when the
    projection does not converge, or M is not positive definite on the admissible motions)."""

    def __init__(self, formulation):
        rhs, model = formulation.fast_rhs, formulation.model
        n, m = model.n, formulation.ws.m
        self.rhs, self.n = rhs, n
        self.poff = rhs.pack.poff
        if len(self.poff) != len(rhs.prim):
            raise AssertionError("fast.step: offsets do not match the packed primitive rows")
        self.model_data = (rhs.prim, rhs.pval, self.poff, rhs.mcols, rhs.mloc, rhs.mvec)
        tol: KinematicTolerance = formulation.projection_tol
        self.limit, self.iterations, self.polish = tol.position * model.length_scale, tol.max_iterations, tol.polish
        self.weight = NORMAL_ERROR_WEIGHT
        self.forced = bool(formulation.forced_change)   # Lagrange._forced_change counted (issue 12gh)
        self.shift, self.dshift, self.ddf = np.zeros(m), np.zeros(m), np.zeros(m)
        self.qe, self.ve = np.zeros(n + 1), np.zeros(n + 1)
        self.A, self.gamma, self.phi = np.zeros((m, n + 1)), np.zeros(m), np.zeros(m)
        self.G, self.B, self.S, self.lam = np.zeros((m, m)), np.zeros((m, n)), np.zeros((m, m)), np.zeros(m)
        self.dx, self.r, self.ax = np.zeros(n), np.zeros(n), np.zeros(m)
        # issue 16: where the rhs takes the band Schur solve, so do the projection and the filter (fast.band)
        self.band_step = None
        if getattr(rhs, "band", None) is not None:
            from .band import BandStep
            self.band_step = BandStep(formulation, rhs)

    def _motions(self, t):
        """shift, dshift, ddf (m,): f(t), f'(t), f''(t) of the prescribed motions (drivers are few)."""
        for row, motion in self.rhs.motions:
            self.shift[row], self.dshift[row], self.ddf[row] = motion(t)

    def project(self, t, y):
        """[q, v] projected onto Phi = 0 and A v + Phi_t = 0 (Lagrange.after_step), or None."""
        if self.band_step is not None:
            out = self.band_step.project(t, y)
            if out is not None:
                return out
        n = self.n
        q, v = y[:n].copy(), y[n: 2 * n].copy()
        self._motions(t)
        prim, pval, poff, mcols, mloc, mvec = self.model_data
        ok = project(q, v, prim, pval, poff, mcols, mloc, mvec, self.shift, self.dshift, self.limit,
                     self.iterations, self.polish, MIN_NORM_PIVOT_RATIO, self.qe, self.ve, self.A, self.gamma, self.phi,
                     self.G, self.dx)
        return np.concatenate([q, v]) if ok else None

    def tangent_error(self, t, y, err):
        """Lagrange._tangent_error: the error with its normal parts scaled by NORMAL_ERROR_WEIGHT, plus the forced
        velocity change where ``forced`` (step_kernels.forced_change; the band filter's band_kernels.band_forced_change)."""
        if self.band_step is not None:
            out = self.band_step.tangent_error(t, y, err)
            if out is not None:
                return out
        prim, pval, _, mcols, mloc, mvec = self.model_data
        out = np.empty_like(err)
        ok = tangent_error(y, err, self.weight, self.forced, prim, pval, mcols, mloc, mvec, MIN_NORM_PIVOT_RATIO, self.qe,
                           self.ve, self.A, self.gamma, self.G, self.ax, self.dx, out)
        return out if ok else None

    def record(self, t, q, v):
        """(q'' (n,), multipliers (m,), (max |Phi|, max |A v + Phi_t|), A (m, n)) at a state, or None. Where the rhs
        takes the band solve, its BandStep.record (the stored state is the one the stepper has just evaluated: no
        new solve; the unique multipliers of full row rank, which are the minimum-norm ones) with A made dense."""
        if self.band_step is not None:
            out = self.band_step.record(t, q, v)
            if out is not None:
                vals, rows, cols = out[3]
                A = np.bincount(rows * (self.n + 1) + cols, vals, len(self.lam) * (self.n + 1))
                return out[0], out[1], out[2], A.reshape(len(self.lam), self.n + 1)[:, :self.n]
        rhs, n = self.rhs, self.n
        self._motions(t)
        prim, pval, poff, mcols, mloc, mvec = self.model_data
        y = np.concatenate([q, v])
        out, path = rhs.kernel(y, self.ddf, prim, pval, mcols, mloc, mvec, rhs.M, rhs.Minv, rhs.diag, rhs.f, rhs.rel, rhs.power,
                               rhs.tau, self.qe, self.ve, self.A, self.gamma, self.B, self.S, self.lam)
        if path < 0 or (path == 1 and not multipliers(self.A, rhs.M, rhs.f, out[n:], MIN_NORM_PIVOT_RATIO,
                                                      self.G, self.r, self.lam)):
            return None     # path 0: the Schur solve left the multipliers in self.lam
        pos, vel = violations(y, self.shift, self.dshift, prim, pval, poff, mcols, mloc, mvec, self.qe, self.ve,
                              self.A, self.phi)
        return out[n:], self.lam.copy(), (pos, vel), self.A[:, :n].copy()


def fast_step(formulation) -> FastStep | None:
    """A :class:`FastStep` for a Lagrange formulation with a compiled right-hand side (spatial models:
    :class:`~.spatial_step.SpatialStep`), else None."""
    rhs = getattr(formulation, "fast_rhs", None)
    if rhs is not None and getattr(rhs, "spatial", False):
        from .spatial_step import spatial_fast_step
        return spatial_fast_step(formulation)
    return None if rhs is None else FastStep(formulation)
