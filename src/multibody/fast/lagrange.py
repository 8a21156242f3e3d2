"""Fast right-hand side of the Lagrange formulation (issue 7 item 1): one compiled call per evaluation.

:func:`fast_lagrange_rhs` packs a supported model once (markers, primitive rows, constant M, M^-1 and
the constant generalized force) and returns a :class:`FastLagrangeRhs`, or None when the model is not
supported or numba is missing; the formulation then keeps its reference path
(Workspace + linalg.gauss_solve), which stays the readable definition of the numbers.

Supported: constraint groups that are builder primitives (Coincident, Distance, Angle, LineProjection,
CoordinateDriver; prescribed motions evaluated in Python, drivers are few), a constant mass matrix,
forces that are ConstantForce (uniform gravity) or none, no nonholonomic rows, and a Lagrange
formulation without Baumgarte terms, ``eliminate`` or ``choose_rows``.

Solve: the Schur complement S = A M^-1 A^T with Cholesky (exact, ~1 us) while S is well conditioned,
else the compiled copy of gauss_solve (SVD; smooth through singular configurations, unique with
redundant rows). Why the switch does not make the right-hand side jump: gauss_solve differs from the
exact solution by its penalty, relative (rel s_max / s_i)^2 (~1e-16 at the switch), and the Schur
solve by its round-off, at most eps cond(S). The pivot ratio is an optimistic estimate of 1 / cond(S)
(the smallest pivot is >= the smallest eigenvalue): on the double four-bar the switch happens at crank
angle 0.047 rad from the singular configuration, s_min / s_max = 8e-3, cond(S) = 1.2e4, i.e. a bound
of 3e-12 relative; measured, the two solves agree there to 3e-14 (tests/test_fast.py), far below any
integrator tolerance, so the right-hand side does not jump where the path changes.
"""
from __future__ import annotations

import numpy as np

from .band import SparseBandRhs, band_schur
from .packed import PackedModel, model_supported, numba_available

#: the Schur/Cholesky solve is used while min_j L_jj^2 / max_j S_jj >= this ratio (an optimistic
#: estimate of 1 / cond(S)); below it (near singular configurations, redundant rows) the SVD solve takes
#: over. Chosen so that eps cond(S) stays ~1e-12 at the switch (see the module docstring); on the double
#: four-bar 97 % of the evaluations of a 10 s run still take the Schur solve.
SCHUR_PIVOT_RATIO = 1e-3

__all__ = ["SCHUR_PIVOT_RATIO", "FastLagrangeRhs", "fast_lagrange_rhs", "numba_available", "sparse_band_rhs", "supported"]

def supported(formulation, sparse: bool = False) -> str | None:
    """None if the fast path applies to this Lagrange formulation, else the reason it does not. ``sparse``: for the
    sparse path's band Schur solve, which also evaluates Projection's accelerations (its ``schur_solve``)."""
    if not (formulation.schur_solve if sparse else formulation.plain_solve):    # e.g. Projection off the sparse path
        return f"formulation '{formulation.name}' solves differently"
    reason = model_supported(formulation.model) or ("nonholonomic rows" if formulation.ws.h else None)
    if reason:
        return reason
    if formulation.stabilization.kind == "baumgarte":
        return "Baumgarte stabilization"
    if len(formulation.keep) != formulation.ws.m or formulation.choose_rows:
        return "row elimination or row choice"
    return None


class FastLagrangeRhs:
    """``rhs(t, y) -> y'`` (2n,) of a supported Lagrange formulation in one compiled call
    (kernels.lagrange_rhs); preallocated workspaces, one output array per call (the integrator keeps
    its stages). ``paths[0]``, ``paths[1]``: how many evaluations used the Schur and the SVD solve."""

    def __init__(self, formulation, schur_pivot_ratio: float = SCHUR_PIVOT_RATIO):
        from . import kernels
        model, n, m = formulation.model, formulation.model.n, formulation.ws.m
        self.formulation, self.kernel = formulation, kernels.lagrange_rhs
        pack = PackedModel(model)
        self.pack = pack
        self.prim, self.pval, self.mcols, self.mloc, self.mvec = pack.prim, pack.pval, pack.mcols, pack.mloc, pack.mvec
        self.M, self.diag, self.Minv, self.f, self.motions = pack.M, pack.diag, pack.Minv, pack.f, pack.motions
        self.rel = float(formulation.regularization.rel)
        self.power = int(formulation.regularization.power)
        self.tau = float(schur_pivot_ratio)
        self.ddf = np.zeros(m)
        self.qe, self.ve = np.zeros(n + 1), np.zeros(n + 1)
        self.A, self.gamma = np.zeros((m, n + 1)), np.zeros(m)
        self.B, self.S, self.lam = np.zeros((m, n)), np.zeros((m, m)), np.zeros(m)
        self.paths = [0, 0]
        # issue 16: a diagonal mass matrix makes S = A M^-1 A^T a band matrix in a row order found once (fast.band)
        self.band = band_schur(pack, n, m, self.tau)

    def __call__(self, t, y):
        for row, motion in self.motions:
            self.ddf[row] = motion(t)[2]
        tau = self.tau
        if self.band is not None:
            out, ok = self.band(y, self.ddf)
            if ok:
                self.paths[0] += 1
                return out
            tau = 0.0       # the band Schur solve declined (pivot ratio below tau): the SVD solve
        out, path = self.kernel(y, self.ddf, self.prim, self.pval, self.mcols, self.mloc, self.mvec, self.M,
                                self.Minv, self.diag, self.f, self.rel, self.power, tau, self.qe, self.ve, self.A,
                                self.gamma, self.B, self.S, self.lam)
        if path < 0:      # not positive definite: the reference path raises the explanatory error
            q, v = self.formulation.split(t, y)
            return np.concatenate([v, self.formulation._solve(t, q, v)[1]])
        self.paths[path] += 1
        return out


def fast_lagrange_rhs(formulation, fast: bool = True):
    """A :class:`FastLagrangeRhs` for ``formulation`` (a formulations.lagrange.Lagrange), or None if
    ``fast`` is False, numba is not installed or the model is not supported (see :func:`supported`)."""
    if not fast or not numba_available():
        return None
    from .spatial_lagrange import spatial_lagrange_rhs     # spatial director models (issue 16)
    spatial = spatial_lagrange_rhs(formulation)
    if spatial is not None or supported(formulation) is not None:
        return spatial
    from .warm import use_compiled     # a cold numba cache: notice, or the NumPy path for this run

    return FastLagrangeRhs(formulation) if use_compiled() else None


def sparse_band_rhs(formulation, fast: bool = True) -> SparseBandRhs | None:
    """A :class:`~.band.SparseBandRhs` for a Lagrange formulation on the sparse path (issue 16 item 2: compiled
    band Schur solve instead of SuperLU and Python per evaluation), or None if ``fast`` is False, numba is missing,
    the model is not supported (:func:`supported`) or its mass matrix is not diagonal."""
    if not fast or not numba_available() or supported(formulation, sparse=True) is not None:
        return None
    from .warm import use_compiled

    pack = PackedModel(formulation.model)
    band = band_schur(pack, formulation.model.n, formulation.ws.m, SCHUR_PIVOT_RATIO, always=True)
    return SparseBandRhs(formulation, pack, band) if band is not None and use_compiled() else None
